// Tests of exercise 3.1, cudalab::stack::push_atomic (suites StackPushAtomic*).
// Run: tools/grade 3.1   or   build/default/bin/push_atomic_test_starter
#include "push_test_battery.cuh"

CUDALAB_PUSH_TEST_SUITES(StackPushAtomic, "3.1 push_atomic", cudalab::stack::push_atomic)
