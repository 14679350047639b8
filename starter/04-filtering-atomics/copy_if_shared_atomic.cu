// Exercise 4.2: filter with a block-shared counter: one shared-memory
// atomicAdd per selected element, one global atomicAdd per block.
// Lesson: chapters/04-filtering-atomics/README.md, "4.2".
// Grade:  tools/grade 4.2      Hints: tools/grade --hint 4.2
#include <cstddef>

#include "cudalab/error.cuh"
#include "cudalab/filter.cuh"

namespace cudalab::filter {
namespace {

constexpr int kThreads = 256;             // threads per block
constexpr int kItems = 8;                 // elements per thread
constexpr int kTile = kThreads * kItems;  // 2048 elements per block

// Block b filters in[b * kTile, (b + 1) * kTile). Element k of thread t is
// in[base + k * kThreads + t]: each load instruction of a warp reads 32
// consecutive elements.
template <class T, class Pred>
__global__ void __launch_bounds__(kThreads)
    shared_atomic_kernel(const T* __restrict__ in, std::size_t n, Pred pred, T* __restrict__ out,
                         std::size_t capacity, unsigned long long* count) {
  __shared__ unsigned s_count;           // selected elements of this block so far
  __shared__ unsigned long long s_base;  // where the block's run starts in out
  if (threadIdx.x == 0) s_count = 0;
  const std::size_t base = blockIdx.x * static_cast<std::size_t>(kTile);
  T x[kItems];
  bool selected[kItems];
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    const std::size_t i = base + static_cast<std::size_t>(k) * kThreads + threadIdx.x;
    x[k] = i < n ? in[i] : T{};
    selected[k] = i < n && pred(x[k]);
  }
  __syncthreads();  // s_count = 0 is visible to every thread

  // TODO(4.2): (1) every selected element takes its index within the block
  // with atomicAdd(&s_count, 1u); __syncthreads(); (2) thread 0 reserves
  // the block's s_count slots with one atomicAdd on count and stores the
  // old value in s_base; __syncthreads(); (3) write each selected element
  // to out[s_base + its index] when that is below capacity.
}

}  // namespace

template <class T, class Pred>
void copy_if_shared_atomic(const T* in, std::size_t n, Pred pred, T* out, std::size_t capacity,
                           unsigned long long* count, cudaStream_t stream) {
  if (!detail::start_copy_if("copy_if_shared_atomic", in, n, out, capacity, count, stream)) return;
  shared_atomic_kernel<<<blocks_for(n, kTile), kThreads, 0, stream>>>(in, n, pred, out, capacity, count);
  CUDALAB_CHECK_LAUNCH();
}

}  // namespace cudalab::filter

CUDALAB_FILTER_INSTANTIATE(copy_if_shared_atomic);
