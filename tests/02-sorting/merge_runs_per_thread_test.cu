// Tests of exercise 2.4, cudalab::sort::merge_runs_per_thread (suites
// SortMergeRunsPerThread*): by size at run 16, then runs of 1 to 64 keys
// (powers of two and not; staged in shared memory, with from 128 down to 32
// merges per block) and 65 and 100 (merged straight from global memory),
// keys and stable key-value pairs.
// Run: tools/grade 2.4   or   build/default/bin/merge_runs_per_thread_test_starter
#include "sort_test_battery.cuh"

CUDALAB_SORT_TEST_SUITES(SortMergeRunsPerThread,
                         ::cudalab::test::sort::merge("2.4 merge_runs_per_thread",
                                                      &::cudalab::sort::merge_runs_per_thread,
                                                      &::cudalab::sort::merge_runs_per_thread, 16,
                                                      {1, 2, 3, 7, 16, 31, 33, 64, 65, 100}))
CUDALAB_SORT_TEST_STABILITY(SortMergeRunsPerThread)
