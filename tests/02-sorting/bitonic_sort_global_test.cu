// Tests of exercise 2.3, cudalab::sort::bitonic_sort_global (suites
// SortBitonicSortGlobal*): by size (every power-of-two padding from 2^11 to
// 2^25, so every number of global strides per pass, 1 to 6, runs, and the
// shared-memory tile of 8192 alone, padded and not), patterns, in place, bad input.
// Run: tools/grade 2.3   or   build/default/bin/bitonic_sort_global_test_starter
#include "sort_test_battery.cuh"

CUDALAB_SORT_TEST_SUITES(SortBitonicSortGlobal,
                         ::cudalab::test::sort::whole("2.3 bitonic_sort_global",
                                                      &::cudalab::sort::bitonic_sort_global, nullptr,
                                                      ::cudalab::sort::max_elements_bitonic))
CUDALAB_SORT_TEST_IN_PLACE(SortBitonicSortGlobal)

namespace {
// Powers of two (no padding: sorted directly in out) and one past them
// (padded in scratch), for every number of global strides per stage.
class SortBitonicSortGlobalPowers : public ::cudalab::test::GpuTestWithParam<std::size_t> {};
TEST_P(SortBitonicSortGlobalPowers, PowerOfTwoAndOnePast) {
  const std::size_t n = GetParam();
  CUDALAB_SKIP_IF_ABOVE_MAX_N(n + 1);
  const auto sd = ::cudalab::test::seed();
  const auto& spec = SortBitonicSortGlobalSpec();
  for (const std::size_t size : {n, n + 1}) {
    ::cudalab::test::sort::expect_keys(
        spec, ::cudalab::test::sort::make_keys(::cudalab::test::sort::Pattern::FewDistinct, size, sd), 0, sd,
        "keys from {0, 1, 2, 3}");
    if (HasFatalFailure()) return;
  }
}
INSTANTIATE_TEST_SUITE_P(Sizes, SortBitonicSortGlobalPowers,
                         ::testing::Values(std::size_t{1} << 11, std::size_t{1} << 12, std::size_t{1} << 13,
                                           std::size_t{1} << 14, std::size_t{1} << 15, std::size_t{1} << 16,
                                           std::size_t{1} << 17, std::size_t{1} << 18, std::size_t{1} << 19,
                                           std::size_t{1} << 20, std::size_t{1} << 21, std::size_t{1} << 24),
                         ::cudalab::test::sort::size_name);
}  // namespace
