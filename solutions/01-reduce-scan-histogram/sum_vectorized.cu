// Exercise 1.4: grid-stride loop, 16-byte vector loads, register
// accumulation, one atomic per block; any n, any alignment.
// Lesson: chapters/01-reduce-scan-histogram/README.md, "1.4".
// Grade:  tools/grade 1.4      Hints: tools/grade --hint 1.4
#include <algorithm>
#include <cstdint>

#include "cudalab/atomics.cuh"
#include "cudalab/device.cuh"
#include "cudalab/error.cuh"
#include "cudalab/reduce.cuh"
#include "cudalab/warp.cuh"

namespace cudalab::reduce {
namespace {

constexpr int kBlock = 256;
constexpr int kWarps = kBlock / 32;

// The 16-byte vector type of each element type.
template <class T> struct Vec4;
template <> struct Vec4<int> { using type = int4; };
template <> struct Vec4<float> { using type = float4; };

// Sum of the 32 lanes' values, in every lane.
template <class Acc>
__device__ __forceinline__ Acc warp_sum(Acc v) {
  // BEGIN SOLUTION
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(kFullMask, v, offset);
  return v;
  // STARTER:
  // // TODO(1.4): the butterfly (__shfl_xor_sync) or the shift
  // // (__shfl_down_sync) reduction of exercise 1.3.
  // return v;
  // END SOLUTION
}

// Elements [0, head) precede the first 16-byte boundary, [head, head + 4 * vecs)
// are read as vectors, [head + 4 * vecs, n) form the tail.
template <class T, class Acc>
__global__ void __launch_bounds__(kBlock) sum_vectorized_kernel(const T* __restrict__ in,
                                                                std::size_t n, std::size_t head,
                                                                std::size_t vecs, Acc* out) {
  using V = typename Vec4<T>::type;
  const std::size_t tid = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  Acc sum = 0;
  // BEGIN SOLUTION
  // Unaligned head and tail: at most 3 elements each, one per thread.
  const std::size_t tail = head + 4 * vecs;
  if (tid < head) sum += static_cast<Acc>(in[tid]);
  if (tail + tid < n) sum += static_cast<Acc>(in[tail + tid]);

  // Aligned body: four independent 16-byte loads in flight per thread before
  // the first add, so that enough bytes are in flight to cover DRAM latency.
  const V* body = reinterpret_cast<const V*>(in + head);
  std::size_t i = tid;
  for (; i + 3 * stride < vecs; i += 4 * stride) {
    V a[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) a[k] = __ldg(body + i + k * stride);
#pragma unroll
    for (int k = 0; k < 4; ++k)
      sum += static_cast<Acc>(a[k].x) + static_cast<Acc>(a[k].y) + static_cast<Acc>(a[k].z) +
             static_cast<Acc>(a[k].w);
  }
  for (; i < vecs; i += stride) {
    const V a = __ldg(body + i);
    sum += static_cast<Acc>(a.x) + static_cast<Acc>(a.y) + static_cast<Acc>(a.z) + static_cast<Acc>(a.w);
  }

  // Block reduction: each warp by shuffles, then warp 0 over the warps' sums.
  __shared__ Acc warp_sums[kWarps];
  const unsigned lane = lane_id();
  const unsigned warp = warp_id();
  sum = warp_sum(sum);
  if (lane == 0) warp_sums[warp] = sum;
  __syncthreads();
  if (warp == 0) {
    sum = lane < kWarps ? warp_sums[lane] : Acc{0};
    sum = warp_sum(sum);
    if (lane == 0) atomic_add(out, sum);
  }
  // STARTER:
  // // TODO(1.4): add in[tid] when tid < head and in[head + 4 * vecs + tid]
  // // when that index is < n; walk the vectors
  // // reinterpret_cast<const V*>(in + head)[i] for i = tid, tid + stride, ...
  // // below vecs, several loads in flight per iteration; then reduce sum
  // // across the block (warp_sum, a __shared__ array of kWarps partials, a
  // // __syncthreads(), warp 0) and add the block's sum to *out once.
  // END SOLUTION
}

// Launches the kernel for n > 0: detail::run_sum (cudalab/reduce.cuh) has
// checked the arguments and set *out to 0, the identity, before.
template <class T, class Acc>
void launch(const T* in, std::size_t n, Acc* out, cudaStream_t stream) {
  // BEGIN SOLUTION
  // Split at the first 16-byte boundary (elements are naturally aligned, so
  // the distance to it is a whole number of elements).
  const auto address = reinterpret_cast<std::uintptr_t>(in);
  const std::size_t head = std::min(n, ((16 - address % 16) % 16) / sizeof(T));
  const std::size_t vecs = (n - head) / 4;
  // One wave of blocks fills every SM; more would only add atomics.
  const std::size_t full_wave = full_wave_blocks(kBlock);
  const std::size_t needed = std::max<std::size_t>(1, (vecs + kBlock - 1) / kBlock);
  const auto blocks = static_cast<unsigned>(std::min(full_wave, needed));
  // STARTER:
  // // TODO(1.4): head = number of elements before the first 16-byte aligned
  // // address (at most 3, at most n); vecs = whole 4-element vectors after it;
  // // blocks = enough to fill the GPU once (cudalab::full_wave_blocks), fewer for small n.
  // const std::size_t head = 0, vecs = 0;
  // const unsigned blocks = 1;
  // END SOLUTION
  sum_vectorized_kernel<<<blocks, kBlock, 0, stream>>>(in, n, head, vecs, out);
  CUDALAB_CHECK_LAUNCH();
}

}  // namespace

void sum_vectorized(const int* in, std::size_t n, long long* out, cudaStream_t stream) {
  detail::run_sum("sum_vectorized", in, n, out, stream, launch);
}

void sum_vectorized(const float* in, std::size_t n, float* out, cudaStream_t stream) {
  detail::run_sum("sum_vectorized", in, n, out, stream, launch);
}

}  // namespace cudalab::reduce
