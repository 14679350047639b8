// Tests of exercise 1.4, cudalab::reduce::sum_vectorized (suites ReduceSumVectorized*).
// Run: tools/grade 1.4   or   build/default/bin/sum_vectorized_test_starter
#include "sum_test_battery.cuh"

CUDALAB_SUM_TEST_SUITES(ReduceSumVectorized, "1.4 sum_vectorized", cudalab::reduce::sum_vectorized)
CUDALAB_SUM_TEST_MAX_ELEMENTS(ReduceSumVectorized, "1.4 sum_vectorized")
