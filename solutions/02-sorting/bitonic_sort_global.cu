// Exercise 2.3: bitonic sort of any n in global memory: tiles of 8192 keys
// in shared memory, then per stage the long strides in global memory and the
// short ones in shared memory, every step on keys held in registers.
// Lesson: chapters/02-sorting/README.md, "2.3".
// Grade:  tools/grade 2.3      Hints: tools/grade --hint 2.3
#include <climits>
#include <cstddef>

#include "cudalab/async_buffer.cuh"
#include "cudalab/error.cuh"
#include "cudalab/sort.cuh"

namespace cudalab::sort {
namespace {

constexpr unsigned kLogGroup = 5;                   // a thread's register group: 2^5 = 32 keys
constexpr unsigned kGroup = 1u << kLogGroup;
constexpr unsigned kTile = 8192;                    // keys per shared-memory tile
constexpr unsigned kTileThreads = kTile / kGroup;   // 256 threads, 32 keys each
constexpr int kMaxStrides = 6;                      // strides per global kernel: 2^6 keys per thread
constexpr unsigned kGlobalThreads = 128;

// One compare-exchange: after it, (a, b) is in ascending order if `ascending`,
// else in descending order.
__device__ __forceinline__ void compare_exchange(int& a, int& b, bool ascending) {
  const int lo = a < b ? a : b;
  const int hi = a < b ? b : a;
  a = ascending ? lo : hi;
  b = ascending ? hi : lo;
}

// The steps of stage k with strides j in [j_lo, j_hi] (powers of two, and
// j_hi < k) on the kKeys keys x[m] = key first + m * s, m = 0, ..., kKeys − 1
// (global indices; the set is closed under the strides s, 2s, ...,
// kKeys / 2 · s, so those steps need no other key). Step j compares x[m] with
// x[m + j / s] for every m whose bit j / s is 0, ascending where bit log2 k of
// the lower index is 0, strides from the largest down.
template <int kKeys>
__device__ __forceinline__ void steps_in_registers(int (&x)[kKeys], unsigned first, unsigned s, unsigned k,
                                                   unsigned j_hi, unsigned j_lo) {
  // BEGIN SOLUTION
#pragma unroll
  for (unsigned h = kKeys / 2; h > 0; h /= 2) {
    const unsigned j = h * s;
    if (j > j_hi || j < j_lo) continue;  // the same for the whole block
#pragma unroll
    for (unsigned m = 0; m < static_cast<unsigned>(kKeys); ++m)
      if ((m & h) == 0) compare_exchange(x[m], x[m + h], ((first + m * s) & k) == 0);
  }
  // STARTER:
  // // TODO(2.3): for h = kKeys / 2 down to 1 (stride j = h * s), if j is in
  // // [j_lo, j_hi]: compare-exchange x[m] and x[m + h] for every m with
  // // (m & h) == 0, ascending where ((first + m * s) & k) == 0.
  // END SOLUTION
}

// Shared memory holds a tile with one padding slot per 32 keys, so that
// every access pattern below hits 32 different banks.
__device__ __forceinline__ unsigned padded(unsigned i) { return i + (i >> kLogGroup); }

// One register phase of the shared-memory kernel: thread t takes the 32 keys
// b + m * 2^kLogS of the tile (b: t with five zero bits inserted at bit
// kLogS), runs the steps of stages k_lo, 2 k_lo, ..., k_hi with strides in
// [j_lo, min(j_hi, k / 2)] on them, and puts them back. The barrier after it
// hands the tile to the next phase.
template <unsigned kLogS>
__device__ __forceinline__ void shared_phase(int* sh, unsigned base, unsigned k_lo, unsigned k_hi,
                                             unsigned j_hi, unsigned j_lo) {
  const unsigned t = threadIdx.x;
  constexpr unsigned s = 1u << kLogS;
  const unsigned b = (t & (s - 1)) | ((t >> kLogS) << (kLogS + kLogGroup));
  // padded(b + m * s) = padded(b) + padded(m * s), since b's five bits at
  // kLogS are zero: one address register, constant offsets.
  int* group = sh + padded(b);
  int x[kGroup];
#pragma unroll
  for (unsigned m = 0; m < kGroup; ++m) x[m] = group[padded(m * s)];
  for (unsigned k = k_lo; k <= k_hi; k *= 2)
    steps_in_registers(x, base + b, s, k, j_hi < k / 2 ? j_hi : k / 2, j_lo);
#pragma unroll
  for (unsigned m = 0; m < kGroup; ++m) group[padded(m * s)] = x[m];
  __syncthreads();
}

// Shared-memory steps: block b loads tile b of `src` (keys past n read as
// INT_MAX), runs, for every stage k = k_first, 2 k_first, ..., k_last, the
// steps j = min(k, kTile) / 2, ..., 1, and stores the tile to `dst`.
// The 13 strides of a tile split into three register phases: strides 4096
// to 256 (keys t + 256 m), 128 to 8 (keys 8 apart) and 4 to 1 (32
// consecutive keys), with one pass through shared memory between phases
// instead of one per step. Directions use the global index.
__global__ void __launch_bounds__(kTileThreads, 4)  // 64 registers: 4 blocks per SM
    bitonic_shared_steps(const int* src, unsigned n, int* dst, unsigned k_first, unsigned k_last) {
  __shared__ int sh[kTile + kTile / kGroup];
  const unsigned t = threadIdx.x;
  const unsigned base = blockIdx.x * kTile;
  int x[kGroup];
  // Coalesced: key t + kTileThreads * m.
#pragma unroll
  for (unsigned m = 0; m < kGroup; ++m) {
    const unsigned i = t + kTileThreads * m;
    x[m] = base + i < n ? src[base + i] : INT_MAX;
  }
#pragma unroll
  for (unsigned m = 0; m < kGroup; ++m) sh[padded(t) + padded(kTileThreads * m)] = x[m];
  __syncthreads();
  unsigned k = k_first;
  if (k <= kGroup) {  // stages 2 ... 32 stay inside a thread's 32 consecutive keys: one phase
    const unsigned k_hi = k_last < kGroup ? k_last : kGroup;
    shared_phase<0>(sh, base, k, k_hi, kGroup / 2, 1);
    k = 2 * k_hi;
  }
  for (; k <= k_last; k *= 2) {
    const unsigned j_max = (k < kTile ? k : kTile) / 2;
    if (j_max >= 256) shared_phase<8>(sh, base, k, k, j_max, 256);
    if (j_max >= 8) shared_phase<3>(sh, base, k, k, j_max < 128 ? j_max : 128, 8);
    shared_phase<0>(sh, base, k, k, j_max < 4 ? j_max : 4, 1);
  }
#pragma unroll
  for (unsigned m = 0; m < kGroup; ++m) {
    const unsigned i = t + kTileThreads * m;
    dst[base + i] = sh[padded(t) + padded(kTileThreads * m)];
  }
}

// Global-memory steps: the kStrides strides j, j / 2, ..., j / 2^(kStrides-1)
// of stage k in one pass. Each thread owns the 2^kStrides keys
// x_m = data[b + m * s], s = j >> (kStrides - 1), m = 0, ..., 2^kStrides − 1,
// which are closed under those strides, and runs the steps in registers.
template <int kStrides>
__global__ void __launch_bounds__(kGlobalThreads)
    bitonic_global_steps(int* data, unsigned size, unsigned k, unsigned j) {
  constexpr int kKeys = 1 << kStrides;
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= size / kKeys) return;
  const unsigned s = j >> (kStrides - 1);  // the smallest stride of this pass
  // BEGIN SOLUTION
  // Insert kStrides zero bits into t at bit log2(s): consecutive threads read
  // consecutive addresses for every m (coalesced).
  const unsigned b = (t & (s - 1)) | ((t & ~(s - 1)) << kStrides);
  int x[kKeys];
#pragma unroll
  for (int m = 0; m < kKeys; ++m) x[m] = data[b + m * s];
  steps_in_registers(x, b, s, k, j, s);
#pragma unroll
  for (int m = 0; m < kKeys; ++m) data[b + m * s] = x[m];
  // STARTER:
  // // TODO(2.3): find the first of this thread's keys, b (t with kStrides zero
  // // bits inserted at bit log2(s)); load the 2^kStrides keys b + m * s into
  // // registers; run steps_in_registers for the strides j down to s; store
  // // them back.
  // END SOLUTION
}

void launch_global_steps(int strides, int* data, unsigned size, unsigned k, unsigned j, cudaStream_t stream) {
  const unsigned threads = size >> strides;
  const unsigned blocks = (threads + kGlobalThreads - 1) / kGlobalThreads;
  switch (strides) {
    case 1: bitonic_global_steps<1><<<blocks, kGlobalThreads, 0, stream>>>(data, size, k, j); break;
    case 2: bitonic_global_steps<2><<<blocks, kGlobalThreads, 0, stream>>>(data, size, k, j); break;
    case 3: bitonic_global_steps<3><<<blocks, kGlobalThreads, 0, stream>>>(data, size, k, j); break;
    case 4: bitonic_global_steps<4><<<blocks, kGlobalThreads, 0, stream>>>(data, size, k, j); break;
    case 5: bitonic_global_steps<5><<<blocks, kGlobalThreads, 0, stream>>>(data, size, k, j); break;
    default: bitonic_global_steps<6><<<blocks, kGlobalThreads, 0, stream>>>(data, size, k, j); break;
  }
  CUDALAB_CHECK_LAUNCH();
}

}  // namespace

void bitonic_sort_global(const int* in, std::size_t n, int* out, cudaStream_t stream) {
  detail::check_sort_arguments("bitonic_sort_global", in, n, out, max_elements_bitonic);
  if (n <= 1) {
    if (n == 1 && in != out) CUDALAB_CHECK(cudaMemcpyAsync(out, in, sizeof(int), cudaMemcpyDeviceToDevice, stream));
    return;
  }
  // The network sorts size = 2^p ≥ max(n, kTile) keys; pad with INT_MAX in a
  // scratch buffer unless n is already such a power of two. Every index and
  // stage fits in 32 bits (size ≤ 2^30).
  const std::size_t size = detail::pad_to_power_of_two(n, kTile);
  AsyncBuffer<int> scratch(size == n ? 0 : size, stream);
  int* data = size == n ? out : scratch.data();
  const auto size32 = static_cast<unsigned>(size);
  const unsigned tiles = size32 / kTile;

  // Stages 2 ... kTile: every tile sorted in shared memory (reads `in`, pads).
  bitonic_shared_steps<<<tiles, kTileThreads, 0, stream>>>(in, static_cast<unsigned>(n), data, 2, kTile);
  CUDALAB_CHECK_LAUNCH();
  for (unsigned k = 2 * kTile; k <= size32; k *= 2) {
    // Strides k / 2 down to kTile in global memory, up to kMaxStrides per pass.
    unsigned j = k / 2;
    while (j >= kTile) {
      int strides = 1;
      while (strides < kMaxStrides && (j >> strides) >= kTile) ++strides;
      launch_global_steps(strides, data, size32, k, j, stream);
      j >>= strides;
    }
    // Strides kTile / 2 down to 1 in shared memory (data is fully padded now).
    bitonic_shared_steps<<<tiles, kTileThreads, 0, stream>>>(data, size32, data, k, k);
    CUDALAB_CHECK_LAUNCH();
  }
  if (data != out)
    CUDALAB_CHECK(cudaMemcpyAsync(out, data, n * sizeof(int), cudaMemcpyDeviceToDevice, stream));
}

}  // namespace cudalab::sort
