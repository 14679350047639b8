// Tests of exercise 1.1, cudalab::reduce::sum_atomic (suites ReduceSumAtomic*).
// Run: tools/grade 1.1   or   build/default/bin/sum_atomic_test_starter
#include "sum_test_battery.cuh"

CUDALAB_SUM_TEST_SUITES(ReduceSumAtomic, "1.1 sum_atomic", cudalab::reduce::sum_atomic)
