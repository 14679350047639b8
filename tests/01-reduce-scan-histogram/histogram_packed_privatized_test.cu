// Tests of exercise 1.12, cudalab::histogram::histogram_packed_privatized (suites HistogramHistogramPackedPrivatized*).
// Run: tools/grade 1.12   or   build/default/bin/histogram_packed_privatized_test_starter
#include "histogram_test_battery.cuh"

CUDALAB_HISTOGRAM_TEST_SUITES(HistogramHistogramPackedPrivatized, "1.12 histogram_packed_privatized",
                              cudalab::histogram::histogram_packed_privatized,
                              cudalab::histogram::packed_privatized_max_bins)
