// Tests of exercise 2.7, cudalab::sort::merge_sort_merge_path (suites
// SortMergeSortMergePath*): keys by size (every tile boundary of 1920 and
// numbers of passes 0 to 14), patterns, stability with key-value pairs,
// in place, bad input.
// Run: tools/grade 2.7   or   build/default/bin/merge_sort_merge_path_test_starter
#include "sort_test_battery.cuh"

CUDALAB_SORT_TEST_SUITES(SortMergeSortMergePath,
                         ::cudalab::test::sort::whole("2.7 merge_sort_merge_path",
                                                      &::cudalab::sort::merge_sort_merge_path,
                                                      &::cudalab::sort::merge_sort_merge_path,
                                                      ::cudalab::sort::max_elements))

namespace {
// Key-value pairs at sizes where the number of merge passes is odd and even.
class SortMergeSortMergePathPairs : public ::cudalab::test::GpuTestWithParam<std::size_t> {};
TEST_P(SortMergeSortMergePathPairs, StableLargePairs) {
  ::cudalab::test::sort::large_pairs(SortMergeSortMergePathSpec(), GetParam());
}
INSTANTIATE_TEST_SUITE_P(Sizes, SortMergeSortMergePathPairs,
                         ::testing::Values(std::size_t{1920}, std::size_t{1921}, std::size_t{3840},
                                           std::size_t{3841}, std::size_t{7681}, std::size_t{1000003},
                                           (std::size_t{1} << 22) + 1, (std::size_t{1} << 24) + 3),
                         ::cudalab::test::sort::size_name);
}  // namespace
