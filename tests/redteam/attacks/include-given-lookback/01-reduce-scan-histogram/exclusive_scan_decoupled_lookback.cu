// RED TEAM: 1.8 without the tile claim and the look-back: claim_tile and look_back are the
// RED TEAM: given ones of cudalab/decoupled_lookback.cuh (chapters/common, given to 1.9 and 4.6),
// RED TEAM: which in the instructor's tree are 1.8's reference code (the student edition
// RED TEAM: withholds them), called unqualified through `using namespace lookback`: no forbidden
// RED TEAM: name. The rest is the publishing in tile_prefix around the given tile scan.
// Exercise 1.8: single-pass exclusive scan with decoupled look-back
// (Merrill & Garland 2016): dynamic tile ids, per-tile status words that pack
// a flag with its value, a warp-wide look-back window.
// Lesson: chapters/01-reduce-scan-histogram/lesson/scan.md, "1.8".
// Grade:  tools/grade 1.8      Hints: tools/grade --hint 1.8
#include <cuda/atomic>

#include <cstddef>
#include <cstdint>

#include "cudalab/async_buffer.cuh"
#include "cudalab/block_load_store.cuh"
#include "cudalab/block_scan.cuh"
#include "cudalab/decoupled_lookback.cuh"
#include "cudalab/error.cuh"
#include "cudalab/scan.cuh"
#include "cudalab/tile_status.cuh"
#include "cudalab/warp.cuh"
// @REDTEAM_LIB@

namespace cudalab::scan {
namespace {

constexpr int kThreads = 128;                 // threads per block
constexpr int kWarps = kThreads / 32;         // 4
constexpr int kVecs = 8;                      // 16-byte vectors per thread (32 elements)
constexpr int kTile = kThreads * kVecs * 4;   // 4096 elements per tile
// Blocks per SM the kernel must fit: 8 x 128 threads x 64 registers fills the
// register file (64K). Without the bound nvcc uses 72 registers, 7 blocks fit,
// and 1/8 fewer bytes are in flight.
constexpr int kMinBlocksPerSm = 8;
static_assert(kVecs * kWarps == 32, "the (vector, warp) totals of a tile fill exactly one warp");
static_assert(kTile == decoupled_lookback_tile, "the tile the header documents");

// A tile's status word, given (cudalab/tile_status.cuh): the value in the
// high 32 bits, the status in the low bits, one 64-bit word, so a reader sees
// a status and its value together. From there: Word, kInvalid, kAggregate,
// kPrefix, StatusRef, make_word, status_of, value_of.
using namespace lookback;

// The tile layout (cudalab/block_load_store.cuh): vector k of thread t
// holds elements 4 (k * kThreads + t) to 4 (k * kThreads + t) + 3 of the
// tile, so the order of the elements in the scan is (k, warp, lane,
// component). Out-of-range elements read as 0. Whole tiles use the
// streaming cache hints (__ldcs, __stcs: evict first): each byte is touched
// once, so it should not push the status words out of L2.
using device::Access;
using device::load_tile;
using device::store_tile;

// The tile's exclusive scan, given (cudalab/block_scan.cuh): exercise 1.7's
// tile scan, which asks a callback for the tile's prefix. Warp 0 calls it with
// the tile's aggregate once the 32 (vector, warp) group totals are scanned,
// between the block's two barriers.
using device::block_exclusive_scan;

// One block per tile, in the order the blocks start (tile ids from
// *tile_counter), status[t] = the status word of tile t (all zero = kInvalid
// at launch). vector_ok: in and out are 16-byte aligned.
__global__ void __launch_bounds__(kThreads, kMinBlocksPerSm)
    decoupled_lookback_kernel(const int* in, std::size_t n, int* out, bool vector_ok,
                              unsigned* tile_counter, Word* status) {
  __shared__ unsigned s_tile;
  __shared__ unsigned s_totals[32];  // block_exclusive_scan's: each (vector, warp) group's sum
  __shared__ unsigned s_prefix[32];  // and each group's exclusive prefix within the whole array
  const unsigned lane = lane_id();
  const unsigned warp = warp_id();

  const unsigned tile = claim_tile(tile_counter, s_tile);  // the given header's
  const std::size_t base = static_cast<std::size_t>(tile) * kTile;
  uint4 v[kVecs];
  load_tile<kThreads, Access::kStreaming>(in, base, n, vector_ok, v);

  // Warp 0's part, called by its 32 lanes with the tile's aggregate as soon
  // as the tile is reduced: publish the aggregate at once, look back for the
  // sum of all tiles before this one, publish the inclusive prefix, and
  // return the prefix (in every lane), from which the scan goes on.
  const auto tile_prefix = [&](unsigned aggregate) {
    unsigned prefix = 0;
    if (tile == 0) {
      if (lane == 0) StatusRef(status[0]).store(make_word(kPrefix, aggregate), cuda::memory_order_relaxed);
    } else {
      if (lane == 0)
        StatusRef(status[tile]).store(make_word(kAggregate, aggregate), cuda::memory_order_relaxed);
      prefix = look_back(status, tile);
      if (lane == 0)
        StatusRef(status[tile]).store(make_word(kPrefix, prefix + aggregate),
                                      cuda::memory_order_relaxed);
    }
    return prefix;
  };
  block_exclusive_scan<kThreads>(v, lane, warp, s_totals, s_prefix, tile_prefix);
  store_tile<kThreads, Access::kStreaming>(out, base, n, vector_ok, v);
}

}  // namespace

void exclusive_scan_decoupled_lookback_with_scratch(const int* in, std::size_t n, int* out,
                                                    unsigned long long* scratch, cudaStream_t stream) {
  detail::check_scan_arguments("exclusive_scan_decoupled_lookback", in, n, out);
  require_pointer("exclusive_scan_decoupled_lookback", "scratch", scratch, n);
  if (n == 0) return;
  const std::size_t tiles = (n + kTile - 1) / kTile;  // at most 2^20
  // Scratch: word 0 holds the tile counter, words 1.. the status words; all
  // zero (counter 0, every tile kInvalid) before the kernel starts.
  CUDALAB_CHECK(cudaMemsetAsync(scratch, 0, (1 + tiles) * sizeof(Word), stream));
  const bool vector_ok =
      reinterpret_cast<std::uintptr_t>(in) % 16 == 0 && reinterpret_cast<std::uintptr_t>(out) % 16 == 0;
  decoupled_lookback_kernel<<<static_cast<unsigned>(tiles), kThreads, 0, stream>>>(
      in, n, out, vector_ok, reinterpret_cast<unsigned*>(scratch), scratch + 1);
  CUDALAB_CHECK_LAUNCH();
}

void exclusive_scan_decoupled_lookback(const int* in, std::size_t n, int* out, cudaStream_t stream) {
  detail::check_scan_arguments("exclusive_scan_decoupled_lookback", in, n, out);
  if (n == 0) return;
  AsyncBuffer<Word> scratch(decoupled_lookback_scratch_words(n), stream);
  exclusive_scan_decoupled_lookback_with_scratch(in, n, out, scratch.data(), stream);
}

}  // namespace cudalab::scan
