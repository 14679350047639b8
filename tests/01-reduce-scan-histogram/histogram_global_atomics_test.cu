// Tests of exercise 1.10, cudalab::histogram::histogram_global_atomics (suites HistogramHistogramGlobalAtomics*).
// Run: tools/grade 1.10   or   build/default/bin/histogram_global_atomics_test_starter
#include "histogram_test_battery.cuh"

CUDALAB_HISTOGRAM_TEST_SUITES(HistogramHistogramGlobalAtomics, "1.10 histogram_global_atomics",
                              cudalab::histogram::histogram_global_atomics,
                              cudalab::histogram::global_atomics_max_bins)

// The bin mapping every exercise is given (cudalab::histogram::EvenBins)
// against CUB's formula; host only, so it also runs without a GPU.
TEST(HistogramEvenBins, MatchesCubFormula) { cudalab::test::histogram::even_bins_match_formula(); }
