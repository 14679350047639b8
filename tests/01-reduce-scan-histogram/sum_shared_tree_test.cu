// Tests of exercise 1.2, cudalab::reduce::sum_shared_tree (suites ReduceSumSharedTree*).
// Run: tools/grade 1.2   or   build/default/bin/sum_shared_tree_test_starter
#include "sum_test_battery.cuh"

CUDALAB_SUM_TEST_SUITES(ReduceSumSharedTree, "1.2 sum_shared_tree", cudalab::reduce::sum_shared_tree)
