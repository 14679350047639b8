// Tests of exercise 1.11, cudalab::histogram::histogram_shared_privatized (suites HistogramHistogramSharedPrivatized*).
// Run: tools/grade 1.11   or   build/default/bin/histogram_shared_privatized_test_starter
#include "histogram_test_battery.cuh"

CUDALAB_HISTOGRAM_TEST_SUITES(HistogramHistogramSharedPrivatized, "1.11 histogram_shared_privatized",
                              cudalab::histogram::histogram_shared_privatized,
                              cudalab::histogram::shared_privatized_max_bins)
