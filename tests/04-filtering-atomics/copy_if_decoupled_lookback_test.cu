// Tests of exercise 4.6, cudalab::filter::copy_if_decoupled_lookback (suites
// FilterCopyIfDecoupledLookback*): the output must equal std::copy_if exactly;
// ten runs at 2^24 + 5 elements, where a race between tiles would show.
// Run: tools/grade 4.6   or   build/default/bin/copy_if_decoupled_lookback_test_starter
#include "filter_test_battery.cuh"

CUDALAB_FILTER_TEST_SUITES(
    FilterCopyIfDecoupledLookback, "4.6 copy_if_decoupled_lookback", copy_if_decoupled_lookback, ::cudalab::test::filter::Order::kGlobal, 0)
