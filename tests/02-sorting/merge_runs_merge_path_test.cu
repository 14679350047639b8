// Tests of exercise 2.6, cudalab::sort::merge_runs_merge_path (suites
// SortMergeRunsMergePath*): by size at run 300007 (tiles of 1920 straddle
// nothing and everything), then runs around the tile (1919, 1920, 1921)
// and huge ones, keys and stable key-value pairs.
// Run: tools/grade 2.6   or   build/default/bin/merge_runs_merge_path_test_starter
#include "sort_test_battery.cuh"

CUDALAB_SORT_TEST_SUITES(SortMergeRunsMergePath,
                         ::cudalab::test::sort::merge("2.6 merge_runs_merge_path",
                                                      &::cudalab::sort::merge_runs_merge_path,
                                                      &::cudalab::sort::merge_runs_merge_path, 300007,
                                                      {1, 15, 960, 1919, 1920, 1921, 5000, 100000,
                                                       1u << 20}))
CUDALAB_SORT_TEST_STABILITY(SortMergeRunsMergePath)
