// Tests of exercise 2.5, cudalab::sort::merge_runs_per_block (suites
// SortMergeRunsPerBlock*): by size at run 1000, then runs of 1 to 5000 keys
// (pairs staged in shared memory up to 2 * run = 4096, searched in global
// memory above), keys and stable key-value pairs.
// Run: tools/grade 2.5   or   build/default/bin/merge_runs_per_block_test_starter
#include "sort_test_battery.cuh"

CUDALAB_SORT_TEST_SUITES(SortMergeRunsPerBlock,
                         ::cudalab::test::sort::merge("2.5 merge_runs_per_block",
                                                      &::cudalab::sort::merge_runs_per_block,
                                                      &::cudalab::sort::merge_runs_per_block, 1000,
                                                      {1, 31, 256, 1000, 2048, 2049, 5000}))
CUDALAB_SORT_TEST_STABILITY(SortMergeRunsPerBlock)
