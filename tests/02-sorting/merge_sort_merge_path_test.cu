// Tests of exercise 2.7, cudalab::sort::merge_sort_merge_path (suites
// SortMergeSortMergePath*): keys by size (the chapter's sizes, numbers of
// passes 0 to 10), patterns, stability with key-value pairs, in place, bad
// input; then every boundary of the block-sort tile (17408 keys) and of the
// merge tile (4352 outputs), with odd and even numbers of passes, keys and pairs.
// Run: tools/grade 2.7   or   build/default/bin/merge_sort_merge_path_test_starter
#include "sort_test_battery.cuh"

CUDALAB_SORT_TEST_SUITES(SortMergeSortMergePath,
                         ::cudalab::test::sort::whole("2.7 merge_sort_merge_path",
                                                      &::cudalab::sort::merge_sort_merge_path,
                                                      &::cudalab::sort::merge_sort_merge_path,
                                                      ::cudalab::sort::max_elements))
CUDALAB_SORT_TEST_STABILITY(SortMergeSortMergePath)
CUDALAB_SORT_TEST_IN_PLACE(SortMergeSortMergePath)

namespace {
// Key-value pairs at sizes where the number of merge passes is odd and even.
class SortMergeSortMergePathPairs : public ::cudalab::test::GpuTestWithParam<std::size_t> {};
TEST_P(SortMergeSortMergePathPairs, StableLargePairs) {
  ::cudalab::test::sort::large_pairs(SortMergeSortMergePathSpec(), GetParam());
}
INSTANTIATE_TEST_SUITE_P(Sizes, SortMergeSortMergePathPairs,
                         ::testing::Values(std::size_t{1920}, std::size_t{8705}, std::size_t{17409},
                                           std::size_t{34817}, std::size_t{69633}, std::size_t{1000003},
                                           (std::size_t{1} << 22) + 1, std::size_t{5000000},
                                           (std::size_t{1} << 24) + 3),
                         ::cudalab::test::sort::size_name);

// The tiles of the reference solution: block sorts of 17408 = 1024 x 17
// keys, merge blocks of 4352 = 256 x 17 outputs. Sizes one below, at and one
// above 1, 2, 3, 4 and 8 block-sort tiles and 1, 2 and 3 merge tiles (0 to 3
// passes, partial last tiles, a last pair without a second run), and both
// sides of 8192 merge tiles, where the splits change from a 9-ary search by
// 8 lanes to a binary search by one thread. On GPUs with less shared memory
// per block (or under CUDALAB_DEVICE_PROFILE=t4, rtx3090, ...) the block
// sorts take 8704 or 4352 keys: those are merge-tile sizes here, so their
// boundaries are covered too.
class SortMergeSortMergePathTiles : public ::cudalab::test::GpuTestWithParam<std::size_t> {};
TEST_P(SortMergeSortMergePathTiles, KeysAndPairs) {
  const std::size_t n = GetParam();
  CUDALAB_SKIP_IF_ABOVE_MAX_N(n);
  const auto sd = ::cudalab::test::seed();
  const auto& spec = SortMergeSortMergePathSpec();
  using ::cudalab::test::sort::Pattern;
  ::cudalab::test::sort::expect_keys(spec, ::cudalab::test::sort::make_keys(Pattern::Random, n, sd), 0, sd,
                                     ::cudalab::test::sort::pattern_name(Pattern::Random));
  if (HasFatalFailure()) return;
  ::cudalab::test::sort::expect_keys(spec, ::cudalab::test::sort::make_keys(Pattern::Reversed, n, sd), 0, sd,
                                     ::cudalab::test::sort::pattern_name(Pattern::Reversed));
  if (HasFatalFailure()) return;
  ::cudalab::test::sort::expect_pairs(spec, ::cudalab::test::sort::make_keys(Pattern::FewDistinct, n, sd), 0, sd,
                                      ::cudalab::test::sort::pattern_name(Pattern::FewDistinct));
}
INSTANTIATE_TEST_SUITE_P(Sizes, SortMergeSortMergePathTiles,
                         ::testing::Values(std::size_t{4351}, std::size_t{4352}, std::size_t{4353},
                                           std::size_t{8703}, std::size_t{8704}, std::size_t{8705},
                                           std::size_t{13055}, std::size_t{13057}, std::size_t{17407},
                                           std::size_t{17408}, std::size_t{17409}, std::size_t{34815},
                                           std::size_t{34816}, std::size_t{34817}, std::size_t{52223},
                                           std::size_t{52224}, std::size_t{52225}, std::size_t{69631},
                                           std::size_t{69632}, std::size_t{69633}, std::size_t{139263},
                                           std::size_t{139264}, std::size_t{139265},
                                           std::size_t{8191} * 4352, std::size_t{8192} * 4352 + 1),
                         ::cudalab::test::sort::size_name);
}  // namespace
