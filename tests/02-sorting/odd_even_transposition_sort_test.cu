// Tests of exercise 2.1, cudalab::sort::odd_even_transposition_sort (suites
// SortOddEvenTranspositionSort*): by size at segment 1024, then every segment 1 to 1024.
// Run: tools/grade 2.1   or   build/default/bin/odd_even_transposition_sort_test_starter
#include "sort_test_battery.cuh"

CUDALAB_SORT_TEST_SUITES(SortOddEvenTranspositionSort,
                         ::cudalab::test::sort::segments("2.1 odd_even_transposition_sort",
                                                         &::cudalab::sort::odd_even_transposition_sort,
                                                         ::cudalab::sort::max_segment_odd_even))
CUDALAB_SORT_TEST_IN_PLACE(SortOddEvenTranspositionSort)
