// Tests of exercise 2.2, cudalab::sort::bitonic_sort_shared (suites
// SortBitonicSortShared*): by size at segment 2048, then every segment 1 to 2048.
// Run: tools/grade 2.2   or   build/default/bin/bitonic_sort_shared_test_starter
#include "sort_test_battery.cuh"

CUDALAB_SORT_TEST_SUITES(SortBitonicSortShared,
                         ::cudalab::test::sort::segments("2.2 bitonic_sort_shared",
                                                         &::cudalab::sort::bitonic_sort_shared,
                                                         ::cudalab::sort::max_segment_bitonic))
CUDALAB_SORT_TEST_IN_PLACE(SortBitonicSortShared)
