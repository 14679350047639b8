// Tests of exercise 4.1, cudalab::filter::copy_if_global_atomic (suites FilterCopyIfGlobalAtomic*).
// Run: tools/grade 4.1   or   build/default/bin/copy_if_global_atomic_test_starter
#include "filter_test_battery.cuh"

CUDALAB_FILTER_TEST_SUITES(FilterCopyIfGlobalAtomic, "4.1 copy_if_global_atomic", copy_if_global_atomic, ::cudalab::test::filter::Order::kNone, 0)
