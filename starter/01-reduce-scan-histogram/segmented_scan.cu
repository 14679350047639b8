// Exercise 1.9: segmented inclusive and exclusive scan with head flags, for
// Plus, Minimum and Maximum, in a single pass with decoupled look-back over
// (flag, value) pairs.
// Lesson: chapters/01-reduce-scan-histogram/lesson/scan.md, "1.9".
// Grade:  tools/grade 1.9      Hints: tools/grade --hint 1.9
#include <cuda/atomic>

#include <cstddef>
#include <cstdint>

#include "cudalab/async_buffer.cuh"
#include "cudalab/decoupled_lookback.cuh"
#include "cudalab/error.cuh"
#include "cudalab/scan.cuh"
#include "cudalab/warp.cuh"

namespace cudalab::scan {
namespace {

constexpr int kThreads = 256;                 // threads per block
constexpr int kWarps = kThreads / 32;         // 8
constexpr int kVecs = 4;                      // groups of 4 elements per thread
constexpr int kTile = kThreads * kVecs * 4;   // 4096 elements per tile
static_assert(kVecs * kWarps == 32, "the (vector, warp) totals of a tile fill exactly one warp");

// A (flag, value) pair of the segmented scan: `flag` says a segment head lies
// inside the span the pair covers, `value` is op over the span's elements
// after its last head (all of them when there is none).
struct Pair {
  unsigned flag;
  int value;
};

// Schwartz's segmented operator: `a` covers the elements before `b`.
template <class Op>
__device__ __forceinline__ Pair combine(Pair a, Pair b, Op op) {
  // TODO(1.9): (a.flag | b.flag, b.flag ? b.value : op(a.value, b.value)).
  return b;
}

template <class Op>
__device__ __forceinline__ Pair identity_pair() {
  return Pair{0u, Op::identity};
}

// A tile's status word, given (cudalab/tile_status.cuh): Word, kInvalid,
// kAggregate, kPrefix, StatusRef, status_of, value_of; and the tile claim of
// 1.8, claim_tile (cudalab/decoupled_lookback.cuh). Its warp_inclusive_scan
// and look_back add unsigned values; this file's, on pairs, hide them.
using namespace lookback;

// A pair in a status word: its value as the word's value, its flag in bit 2
// beside the status bits.
__device__ __forceinline__ Word make_word(unsigned status, Pair p) {
  return lookback::make_word(status | (p.flag != 0 ? 4u : 0u), static_cast<unsigned>(p.value));
}
__device__ __forceinline__ Pair pair_of(Word w) {
  return Pair{(static_cast<unsigned>(w) >> 2) & 1u, static_cast<int>(value_of(w))};
}

// Shuffles of a pair.
__device__ __forceinline__ Pair shfl_up(Pair p, unsigned d) {
  return Pair{__shfl_up_sync(kFullMask, p.flag, d), __shfl_up_sync(kFullMask, p.value, d)};
}
__device__ __forceinline__ Pair shfl_down(Pair p, unsigned d) {
  return Pair{__shfl_down_sync(kFullMask, p.flag, d), __shfl_down_sync(kFullMask, p.value, d)};
}
__device__ __forceinline__ Pair shfl(Pair p, int lane) {
  return Pair{__shfl_sync(kFullMask, p.flag, lane), __shfl_sync(kFullMask, p.value, lane)};
}

// The tile layout of exercise 1.8: group k of thread t holds elements
// 4 (k * kThreads + t) to 4 (k * kThreads + t) + 3 of the tile. Values past
// the end read as the identity, flags as 0; element 0 of the array is always
// a head. vector_ok: in and out 16-byte aligned, head_flags 4-byte aligned.
template <class Op>
__device__ __forceinline__ void load_tile(const int* in, const std::uint8_t* head_flags,
                                          std::size_t base, std::size_t n, bool vector_ok,
                                          int (&v)[kVecs][4], unsigned (&f)[kVecs][4]) {
  if (vector_ok && base + kTile <= n) {
    const int4* src = reinterpret_cast<const int4*>(in + base);
    const unsigned* flags = reinterpret_cast<const unsigned*>(head_flags + base);
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      const int4 x = src[k * kThreads + threadIdx.x];
      const unsigned fl = flags[k * kThreads + threadIdx.x];
      v[k][0] = x.x;
      v[k][1] = x.y;
      v[k][2] = x.z;
      v[k][3] = x.w;
#pragma unroll
      for (int j = 0; j < 4; ++j) f[k][j] = (fl >> (8 * j)) & 0xffu;
    }
  } else {
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      const std::size_t i = base + 4 * (static_cast<std::size_t>(k) * kThreads + threadIdx.x);
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        v[k][j] = i + j < n ? in[i + j] : Op::identity;
        f[k][j] = i + j < n ? head_flags[i + j] : 0u;
      }
    }
  }
  if (base == 0 && threadIdx.x == 0) f[0][0] = 1;  // element 0 always starts a segment
}

__device__ __forceinline__ void store_tile(int* out, std::size_t base, std::size_t n,
                                           bool vector_ok, const int (&v)[kVecs][4]) {
  if (vector_ok && base + kTile <= n) {
    int4* dst = reinterpret_cast<int4*>(out + base);
#pragma unroll
    for (int k = 0; k < kVecs; ++k) dst[k * kThreads + threadIdx.x] = make_int4(v[k][0], v[k][1], v[k][2], v[k][3]);
  } else {
#pragma unroll
    for (int k = 0; k < kVecs; ++k) {
      const std::size_t i = base + 4 * (static_cast<std::size_t>(k) * kThreads + threadIdx.x);
#pragma unroll
      for (int j = 0; j < 4; ++j)
        if (i + j < n) out[i + j] = v[k][j];
    }
  }
}

// Inclusive scan of pairs over the 32 lanes of a warp.
template <class Op>
__device__ __forceinline__ Pair warp_inclusive_scan(Pair x, Op op) {
  // TODO(1.9): the warp scan of 1.8 with combine() in place of +: lane l
  // combines the pair of lane l - d (the earlier one, on the left) with its own.
  return x;
}

// Warp 0 of tile `tile` > 0: the combination of every tile before it, in
// every lane (the decoupled look-back of 1.8 under the segmented operator).
template <class Op>
__device__ __forceinline__ Pair look_back(Word* status, unsigned tile, Op op) {
  Pair prefix = identity_pair<Op>();
  // TODO(1.9): the look-back of 1.8 over pairs: lanes past the nearest
  // kPrefix contribute the identity pair; reduce the window with combine()
  // in tile order (older tiles on the left), then prefix = window (+) prefix.
  return prefix;
}

template <class Op, bool Inclusive>
__global__ void __launch_bounds__(kThreads)
    segmented_scan_kernel(const int* in, const std::uint8_t* head_flags, std::size_t n, int* out,
                          bool vector_ok, unsigned* tile_counter, Word* status, Op op) {
  __shared__ unsigned s_tile;
  __shared__ Pair s_totals[32];
  __shared__ Pair s_prefix[32];
  const unsigned lane = lane_id();
  const unsigned warp = warp_id();
  const unsigned tile = claim_tile(tile_counter, s_tile);
  const std::size_t base = static_cast<std::size_t>(tile) * kTile;
  int v[kVecs][4];
  unsigned f[kVecs][4];
  load_tile<Op>(in, head_flags, base, n, vector_ok, v, f);

  // TODO(1.9): the block scan and look-back of 1.8 on (flag, value) pairs
  // under combine(): scan each group of 4, warp_inclusive_scan, the 32 group
  // totals in s_totals, warp 0 scans them, publishes, calls look_back and
  // publishes combine(prefix, aggregate); then each element's output:
  // inclusive = the running pair's value after it, exclusive = the identity
  // at a head, else the running value before it.
  store_tile(out, base, n, vector_ok, v);
}

template <bool Inclusive, class Op>
void launch(const char* function, const int* in, const std::uint8_t* head_flags, std::size_t n,
            int* out, Op op, cudaStream_t stream) {
  detail::check_scan_arguments(function, in, n, out);
  require_pointer(function, "head_flags", head_flags, n);
  if (n == 0) return;
  const std::size_t tiles = (n + kTile - 1) / kTile;
  AsyncBuffer<Word> scratch(1 + tiles, stream);  // word 0: tile counter; then the status words
  scratch.fill_bytes(0);
  const bool vector_ok = reinterpret_cast<std::uintptr_t>(in) % 16 == 0 &&
                         reinterpret_cast<std::uintptr_t>(out) % 16 == 0 &&
                         reinterpret_cast<std::uintptr_t>(head_flags) % 4 == 0;
  segmented_scan_kernel<Op, Inclusive><<<static_cast<unsigned>(tiles), kThreads, 0, stream>>>(
      in, head_flags, n, out, vector_ok, reinterpret_cast<unsigned*>(scratch.data()),
      scratch.data() + 1, op);
  CUDALAB_CHECK_LAUNCH();
}

}  // namespace

void segmented_inclusive_scan(const int* in, const std::uint8_t* head_flags, std::size_t n, int* out,
                              Plus op, cudaStream_t stream) {
  launch<true>("segmented_inclusive_scan", in, head_flags, n, out, op, stream);
}
void segmented_inclusive_scan(const int* in, const std::uint8_t* head_flags, std::size_t n, int* out,
                              Minimum op, cudaStream_t stream) {
  launch<true>("segmented_inclusive_scan", in, head_flags, n, out, op, stream);
}
void segmented_inclusive_scan(const int* in, const std::uint8_t* head_flags, std::size_t n, int* out,
                              Maximum op, cudaStream_t stream) {
  launch<true>("segmented_inclusive_scan", in, head_flags, n, out, op, stream);
}
void segmented_exclusive_scan(const int* in, const std::uint8_t* head_flags, std::size_t n, int* out,
                              Plus op, cudaStream_t stream) {
  launch<false>("segmented_exclusive_scan", in, head_flags, n, out, op, stream);
}
void segmented_exclusive_scan(const int* in, const std::uint8_t* head_flags, std::size_t n, int* out,
                              Minimum op, cudaStream_t stream) {
  launch<false>("segmented_exclusive_scan", in, head_flags, n, out, op, stream);
}
void segmented_exclusive_scan(const int* in, const std::uint8_t* head_flags, std::size_t n, int* out,
                              Maximum op, cudaStream_t stream) {
  launch<false>("segmented_exclusive_scan", in, head_flags, n, out, op, stream);
}

}  // namespace cudalab::scan
