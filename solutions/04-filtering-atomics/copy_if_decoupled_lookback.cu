// Exercise 4.6: the stable filter in one pass: the scan of exercise 1.8
// (Merrill & Garland 2016) over the tiles' counts of selected elements. Its
// dynamic tile ids, status words and warp-wide look-back are 1.8's, given in
// cudalab/decoupled_lookback.cuh, and its warp scan is 1.7's, given in
// cudalab/block_scan.cuh; the tile's work is this exercise's.
// Lesson: chapters/04-filtering-atomics/README.md, "4.6".
// Grade:  tools/grade 4.6      Hints: tools/grade --hint 4.6
#include <cuda/atomic>

#include <cstddef>
#include <cstdint>

#include "cudalab/async_buffer.cuh"
#include "cudalab/block_scan.cuh"
#include "cudalab/decoupled_lookback.cuh"
#include "cudalab/error.cuh"
#include "cudalab/filter.cuh"
#include "cudalab/warp.cuh"

namespace cudalab::filter {
namespace {

constexpr int kThreads = 128;          // threads per block
constexpr int kWarps = kThreads / 32;  // 4
constexpr int kVecs = 8;               // 16-byte vectors per thread
// 8 blocks of 128 threads per SM: at most 64 registers per thread (as 1.8).
constexpr int kMinBlocksPerSm = 8;
static_assert(kVecs * kWarps == 32, "the (vector, warp) groups of a tile fill exactly one warp");

template <class T>
struct Shape {
  static constexpr int kPerVec = 16 / static_cast<int>(sizeof(T));   // 4 int32 or 2 int64 per vector
  static constexpr int kPerThread = kVecs * kPerVec;                 // 32 or 16 elements
  static constexpr int kTile = kThreads * kPerThread;                // 4096 or 2048 elements
  static_assert(kPerThread <= 32, "one bit per element in an unsigned");
};

// One 16-byte vector of elements.
template <class T>
union Vec {
  uint4 raw;
  T e[Shape<T>::kPerVec];
};

// Exercise 1.8's single pass, given (cudalab/decoupled_lookback.cuh): the
// tile status word, here with a tile's count as its value (Word, kInvalid,
// kAggregate, kPrefix, StatusRef, make_word, status_of, value_of), the tile
// claim (claim_tile) and the look-back over the counts of the tiles before
// this one (look_back).
using namespace lookback;

// Exercise 1.7's warp scan, given (cudalab/block_scan.cuh): lane l gets the
// sum of x over lanes 0 to l.
using scan::device::warp_inclusive_scan;

// The tile layout (as 1.8): vector k of thread t holds the elements
// P (k * kThreads + t) .. P (k * kThreads + t) + P - 1 of the tile (P per
// vector), so every warp-wide load is 512 contiguous bytes, and the input
// order is (k, warp, lane, component). Whole tiles of aligned input use
// streaming loads (evict first: read once, keep the status words in L2).
// Returns the selection flags: bit k * P + c for component c of vector k.
template <class T, class Pred>
__device__ __forceinline__ unsigned load_and_flag(const T* in, std::size_t base, std::size_t n, bool vector_ok,
                                                  Pred pred, Vec<T> (&v)[kVecs]) {
  constexpr int P = Shape<T>::kPerVec;
  unsigned bits = 0;
  if (vector_ok && base + Shape<T>::kTile <= n) {
    const uint4* src = reinterpret_cast<const uint4*>(in + base);
#pragma unroll
    for (int k = 0; k < kVecs; ++k) v[k].raw = __ldcs(src + k * kThreads + threadIdx.x);
#pragma unroll
    for (int k = 0; k < kVecs; ++k)
#pragma unroll
      for (int c = 0; c < P; ++c)
        if (pred(v[k].e[c])) bits |= 1u << (k * P + c);
  } else {
#pragma unroll
    for (int k = 0; k < kVecs; ++k)
#pragma unroll
      for (int c = 0; c < P; ++c) {
        const std::size_t i = base + P * (static_cast<std::size_t>(k) * kThreads + threadIdx.x) + c;
        v[k].e[c] = i < n ? in[i] : T{};
        if (i < n && pred(v[k].e[c])) bits |= 1u << (k * P + c);
      }
  }
  return bits;
}

// One block per tile, in the order the blocks start (tile ids from
// *tile_counter); status[t] is tile t's word, all kInvalid at launch.
// vector_ok: `in` is 16-byte aligned. The block with the last tile id
// writes the total to *count.
template <class T, class Pred>
__global__ void __launch_bounds__(kThreads, kMinBlocksPerSm)
    decoupled_lookback_kernel(const T* __restrict__ in, std::size_t n, Pred pred, T* __restrict__ out,
                              std::size_t capacity, unsigned long long* count, bool vector_ok,
                              unsigned* tile_counter, Word* status) {
  constexpr int P = Shape<T>::kPerVec;
  constexpr int kTile = Shape<T>::kTile;
  __shared__ unsigned s_tile;
  __shared__ unsigned s_group[32];  // selected elements of the tile before each (vector k, warp) group
  __shared__ unsigned s_aggregate;  // selected elements of the tile
  __shared__ unsigned s_prefix;     // selected elements of all tiles before this one
  __shared__ T s_staged[kTile];     // the tile's selected elements, compacted, in input order
  const unsigned lane = lane_id();
  const unsigned warp = warp_id();

  // Tile ids in the order the blocks start, never blockIdx.x: a block only
  // ever waits for tiles whose blocks have already started (see 1.8).
  const unsigned tile = claim_tile(tile_counter, s_tile);
  const std::size_t base = static_cast<std::size_t>(tile) * kTile;
  Vec<T> v[kVecs];
  const unsigned bits = load_and_flag(in, base, n, vector_ok, pred, v);

  // BEGIN SOLUTION
  // 1. Per vector, the selected elements of the warp's earlier vectors of
  //    the same k (a warp scan of the vector counts); lane 31 holds each
  //    group's total.
  unsigned excl[kVecs];
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    const unsigned c = static_cast<unsigned>(__popc((bits >> (k * P)) & ((1u << P) - 1u)));
    const unsigned inc = warp_inclusive_scan(c);
    excl[k] = inc - c;
    if (lane == 31) s_group[k * kWarps + warp] = inc;
  }
  __syncthreads();
  // 2. Warp 0 scans the 32 group totals (in input order: k, then warp) and
  //    publishes the tile's count at once: tile 0 its inclusive prefix,
  //    every other tile its aggregate.
  if (warp == 0) {
    const unsigned total = s_group[lane];
    const unsigned inc = warp_inclusive_scan(total);
    s_group[lane] = inc - total;
    const unsigned aggregate = __shfl_sync(kFullMask, inc, 31);
    if (lane == 0) {
      s_aggregate = aggregate;
      StatusRef(status[tile]).store(make_word(tile == 0 ? kPrefix : kAggregate, aggregate),
                                    cuda::memory_order_relaxed);
    }
  }
  __syncthreads();
  // 3. Every thread stages its selected elements at their place within the
  //    tile (this needs no look-back, so it overlaps the wait).
#pragma unroll
  for (int k = 0; k < kVecs; ++k) {
    unsigned rank = s_group[k * kWarps + warp] + excl[k];
#pragma unroll
    for (int c = 0; c < P; ++c)
      if ((bits >> (k * P + c)) & 1u) s_staged[rank++] = v[k].e[c];
  }
  // 4. Warp 0 looks back for the tile's prefix and publishes the inclusive
  //    prefix; the last tile also writes the total.
  if (warp == 0) {
    const unsigned aggregate = s_aggregate;
    const unsigned prefix = tile == 0 ? 0u : look_back(status, tile);
    if (lane == 0) {
      if (tile != 0)
        StatusRef(status[tile]).store(make_word(kPrefix, prefix + aggregate), cuda::memory_order_relaxed);
      s_prefix = prefix;
      if (tile == gridDim.x - 1) *count = static_cast<unsigned long long>(prefix) + aggregate;
    }
  }
  __syncthreads();
  // 5. Coalesced stores of the compacted tile, nothing at or past capacity.
  const unsigned prefix = s_prefix;
  const unsigned aggregate = s_aggregate;
  for (unsigned j = threadIdx.x; j < aggregate; j += kThreads) {
    const std::size_t slot = static_cast<std::size_t>(prefix) + j;
    if (slot < capacity) __stcs(out + slot, s_staged[j]);
  }
  // STARTER:
  // // TODO(4.6): count each vector's selected elements (bits), warp-scan the
  // // counts (warp_inclusive_scan), lane 31 stores each (k, warp) group total
  // // in s_group; warp 0 scans the 32 totals (s_group becomes their exclusive
  // // prefixes), stores the tile's aggregate in s_aggregate and publishes it
  // // (tile 0: kPrefix, others: kAggregate); every thread stages its selected
  // // elements at s_group[k * kWarps + warp] + its warp offset in s_staged;
  // // warp 0 calls look_back (tile > 0; 1.8's, given), publishes kPrefix with
  // // prefix + aggregate, stores s_prefix and, in the last tile
  // // (gridDim.x - 1), *count; finally copy s_staged[0 .. aggregate) to
  // // out[prefix + j] where that is below capacity.
  // END SOLUTION
}

}  // namespace

template <class T, class Pred>
void copy_if_decoupled_lookback(const T* in, std::size_t n, Pred pred, T* out, std::size_t capacity,
                                unsigned long long* count, cudaStream_t stream) {
  detail::check_filter_arguments("copy_if_decoupled_lookback", in, n, out, capacity, count);
  if (n == 0) {
    CUDALAB_CHECK(cudaMemsetAsync(count, 0, sizeof(unsigned long long), stream));
    return;
  }
  constexpr int kTile = Shape<T>::kTile;
  const std::size_t tiles = (n + kTile - 1) / kTile;  // at most 2^21
  // Scratch: word 0 holds the tile counter, words 1.. the status words; all
  // zero (counter 0, every tile kInvalid) before the kernel starts.
  AsyncBuffer<Word> scratch(1 + tiles, stream);
  scratch.fill_bytes(0);
  const bool vector_ok = reinterpret_cast<std::uintptr_t>(in) % 16 == 0;
  decoupled_lookback_kernel<<<static_cast<unsigned>(tiles), kThreads, 0, stream>>>(
      in, n, pred, out, capacity, count, vector_ok, reinterpret_cast<unsigned*>(scratch.data()),
      scratch.data() + 1);
  CUDALAB_CHECK_LAUNCH();
}

}  // namespace cudalab::filter

CUDALAB_FILTER_INSTANTIATE(copy_if_decoupled_lookback);
