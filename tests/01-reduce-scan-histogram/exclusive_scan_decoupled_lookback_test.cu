// Tests of exercise 1.8, cudalab::scan::exclusive_scan_decoupled_lookback
// (suites ScanExclusiveScanDecoupledLookback*), including many runs on the
// same large input: a race between tiles shows as a rare wrong answer, and
// the tile counter the call leaves in the caller's scratch (dynamic tile ids).
// Run: tools/grade 1.8   or   build/default/bin/exclusive_scan_decoupled_lookback_test_starter
#include "scan_test_battery.cuh"

CUDALAB_SCAN_TEST_SUITES(ScanExclusiveScanDecoupledLookback,
                         ::cudalab::test::scan::whole_array(
                             "1.8 exclusive_scan_decoupled_lookback",
                             &::cudalab::scan::exclusive_scan_decoupled_lookback, false))
CUDALAB_SCAN_REPEATED_TESTS(ScanExclusiveScanDecoupledLookback)

namespace {

using ::cudalab::test::scan::kPoison;

// What exclusive_scan_decoupled_lookback_with_scratch leaves behind: its scan
// must be right, word 0 of the scratch must count one atomicAdd per tile
// (blocks start in any order, so a tile id must come from the counter, never
// from blockIdx.x), and the word after the scratch must stay poisoned.
class ScanExclusiveScanDecoupledLookbackTileIds : public ::cudalab::test::GpuTest {};

TEST_F(ScanExclusiveScanDecoupledLookbackTileIds, EveryBlockTakesItsTileFromTheCounter) {
  const char* exercise = "1.8 exclusive_scan_decoupled_lookback";
  const auto sd = ::cudalab::test::seed();
  constexpr std::size_t kT = ::cudalab::scan::decoupled_lookback_tile;
  for (const std::size_t n : {std::size_t{1}, kT - 1, kT, kT + 1, 3 * kT + 5, std::size_t{65537},
                              std::size_t{(1u << 20) + 7}}) {
    if (n > ::cudalab::test::max_n()) continue;
    const auto in = ::cudalab::gen::uniform_int<int>(n, sd, INT_MIN, INT_MAX);
    const std::vector<int> expected = ::cudalab::reference::scan_tiles(in, 0, false);
    const std::size_t words = ::cudalab::scan::decoupled_lookback_scratch_words(n);
    const std::size_t tiles = (n + kT - 1) / kT;
    ASSERT_EQ(words, 1 + tiles);
    ::cudalab::DeviceBuffer<int> d_in(in), d_out(n);
    ::cudalab::DeviceBuffer<unsigned long long> scratch(words + 1);  // + one guard word
    d_out.fill_bytes(kPoison);
    scratch.fill_bytes(kPoison);  // the call must clear it itself
    ::cudalab::scan::exclusive_scan_decoupled_lookback_with_scratch(d_in.data(), n, d_out.data(),
                                                                    scratch.data(), nullptr);
    CUDALAB_CHECK(cudaDeviceSynchronize());
    const std::vector<int> actual = d_out.download();
    const auto at = ::cudalab::first_mismatch(expected, actual);
    ASSERT_FALSE(at.has_value()) << ::cudalab::test::context(exercise, n, sd)
                                 << "exclusive_scan_decoupled_lookback_with_scratch: "
                                 << ::cudalab::describe_first_mismatch(expected, actual);
    const std::vector<unsigned long long> left = scratch.download();
    const auto counter = static_cast<std::uint32_t>(left[0]);
    ASSERT_EQ(counter, tiles)
        << ::cudalab::test::context(exercise, n, sd) << "after a call over " << tiles
        << " tile(s) of " << kT << " elements, the tile counter (word 0 of the scratch, cleared "
        << "before the kernel) holds " << counter << ", expected " << tiles
        << (counter == 0 ? ": no block took its tile id from it. Take the tile id from "
                           "atomicAdd(tile_counter, 1) (one thread, broadcast through shared "
                           "memory), never from blockIdx.x: blocks may start in any order, and "
                           "a block that waits for a tile whose block has not started can wait "
                           "forever."
                         : ": each block must take exactly one tile id, with one atomicAdd, "
                           "and the counter must be cleared before the kernel starts.");
    ASSERT_EQ(left[words], 0xA5A5A5A5A5A5A5A5ull)
        << ::cudalab::test::context(exercise, n, sd) << "the call wrote the word after its "
        << words << " words of scratch (1 counter + " << tiles << " status words)";
  }
}

TEST(ScanExclusiveScanDecoupledLookbackTileIdsBadInput, NullScratchThrows) {
  const int* some_in = reinterpret_cast<const int*>(std::uintptr_t{256});  // never dereferenced
  int* some_out = reinterpret_cast<int*>(std::uintptr_t{512});
  EXPECT_THROW(::cudalab::scan::exclusive_scan_decoupled_lookback_with_scratch(some_in, 10, some_out,
                                                                               nullptr, nullptr),
               std::invalid_argument)
      << "null scratch, n > 0";
}

}  // namespace
