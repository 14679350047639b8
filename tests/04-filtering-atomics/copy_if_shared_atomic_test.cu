// Tests of exercise 4.2, cudalab::filter::copy_if_shared_atomic (suites FilterCopyIfSharedAtomic*).
// Run: tools/grade 4.2   or   build/default/bin/copy_if_shared_atomic_test_starter
#include "filter_test_battery.cuh"

CUDALAB_FILTER_TEST_SUITES(FilterCopyIfSharedAtomic, "4.2 copy_if_shared_atomic", copy_if_shared_atomic, ::cudalab::test::filter::Order::kNone, 0)
