// Tests of exercise 1.3, cudalab::reduce::sum_warp_shuffle (suites ReduceSumWarpShuffle*).
// Run: tools/grade 1.3   or   build/default/bin/sum_warp_shuffle_test_starter
#include "sum_test_battery.cuh"

CUDALAB_SUM_TEST_SUITES(ReduceSumWarpShuffle, "1.3 sum_warp_shuffle", cudalab::reduce::sum_warp_shuffle)
