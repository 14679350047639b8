// Exercise 4.6: the stable filter in one pass: dynamic tile ids, per-tile
// 64-bit status words that pack a flag with the tile's count, a warp-wide
// look-back window (Merrill & Garland 2016), as the scan of exercise 1.8.
// Lesson: chapters/04-filtering-atomics/README.md, "4.6".
// Grade:  tools/grade 4.6      Hints: tools/grade --hint 4.6
#include <cuda/atomic>

#include <cstddef>
#include <cstdint>

#include "cudalab/async_buffer.cuh"
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

// A tile's status word: the count in the high 32 bits, the status in the
// low bits, so a reader sees a status and its count together.
using Word = unsigned long long;
constexpr unsigned kInvalid = 0;    // nothing published yet (cudaMemsetAsync 0)
constexpr unsigned kAggregate = 1;  // count = the selected elements of this tile alone
constexpr unsigned kPrefix = 2;     // count = the selected elements of this tile and every tile before it
using StatusRef = cuda::atomic_ref<Word, cuda::thread_scope_device>;

__device__ __forceinline__ Word make_word(unsigned status, unsigned count) {
  return (static_cast<Word>(count) << 32) | status;
}
__device__ __forceinline__ unsigned status_of(Word w) { return static_cast<unsigned>(w) & 3u; }
__device__ __forceinline__ unsigned count_of(Word w) { return static_cast<unsigned>(w >> 32); }

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

// Inclusive scan of x over the 32 lanes of a warp (shuffles, as 1.8).
__device__ __forceinline__ unsigned warp_inclusive_scan(unsigned x) {
  const unsigned lane = lane_id();
#pragma unroll
  for (unsigned d = 1; d < 32; d *= 2) {
    const unsigned y = __shfl_up_sync(kFullMask, x, d);
    if (lane >= d) x += y;
  }
  return x;
}

// Called by all 32 lanes of warp 0 of the block that owns tile `tile` > 0.
// Returns, in every lane, the number of selected elements in all tiles
// before it. Lane l examines tile (tile - 1 - l), then the window moves 32
// tiles back, until some lane finds an inclusive prefix.
__device__ __forceinline__ unsigned look_back(Word* status, unsigned tile) {
  unsigned prefix = 0;
  // TODO(4.6): lane l reads the status word of tile (tile - 1 - l) with a
  // relaxed cuda::atomic_ref load (tiles before 0: an inclusive prefix of
  // 0); spin while any lane sees kInvalid (__any_sync); then add the counts
  // of the lanes up to and including the nearest one with kPrefix
  // (__ballot_sync, a warp sum); if no lane had kPrefix, move the window 32
  // tiles back and repeat.
  return prefix;
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
  if (threadIdx.x == 0) s_tile = atomicAdd(tile_counter, 1u);
  __syncthreads();
  const unsigned tile = s_tile;
  const std::size_t base = static_cast<std::size_t>(tile) * kTile;
  Vec<T> v[kVecs];
  const unsigned bits = load_and_flag(in, base, n, vector_ok, pred, v);

  // TODO(4.6): count each vector's selected elements (bits), warp-scan the
  // counts, lane 31 stores each (k, warp) group total in s_group; warp 0
  // scans the 32 totals (s_group becomes their exclusive prefixes), stores
  // the tile's aggregate in s_aggregate and publishes it (tile 0: kPrefix,
  // others: kAggregate); every thread stages its selected elements at
  // s_group[k * kWarps + warp] + its warp offset in s_staged; warp 0 calls
  // look_back (tile > 0), publishes kPrefix with prefix + aggregate, stores
  // s_prefix and, in the last tile (gridDim.x - 1), *count; finally copy
  // s_staged[0 .. aggregate) to out[prefix + j] where that is below capacity.
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
