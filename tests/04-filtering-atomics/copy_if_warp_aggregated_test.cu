// Tests of exercise 4.4, cudalab::filter::copy_if_warp_aggregated (suites FilterCopyIfWarpAggregated*).
// Run: tools/grade 4.4   or   build/default/bin/copy_if_warp_aggregated_test_starter
#include "filter_test_battery.cuh"

CUDALAB_FILTER_TEST_SUITES(FilterCopyIfWarpAggregated, "4.4 copy_if_warp_aggregated", copy_if_warp_aggregated, ::cudalab::test::filter::Order::kNone, 0)
