// Tests of exercise 4.5, cudalab::filter::copy_if_cooperative_groups (suites FilterCopyIfCooperativeGroups*).
// Run: tools/grade 4.5   or   build/default/bin/copy_if_cooperative_groups_test_starter
#include "filter_test_battery.cuh"

CUDALAB_FILTER_TEST_SUITES(FilterCopyIfCooperativeGroups, "4.5 copy_if_cooperative_groups", copy_if_cooperative_groups, ::cudalab::test::filter::Order::kNone, 0)
