// Exercise 4.1: filter with one global atomicAdd per selected element.
// Lesson: chapters/04-filtering-atomics/README.md, "4.1".
// Grade:  tools/grade 4.1      Hints: tools/grade --hint 4.1
#include <cstddef>

#include "cudalab/error.cuh"
#include "cudalab/filter.cuh"

namespace cudalab::filter {
namespace {

constexpr int kBlock = 256;

// Thread i looks at in[i]; a selected element takes the next free output
// slot from *count and is written there when the slot is below capacity.
template <class T, class Pred>
__global__ void global_atomic_kernel(const T* __restrict__ in, std::size_t n, Pred pred, T* __restrict__ out,
                                     std::size_t capacity, unsigned long long* count) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const T x = in[i];
  // BEGIN SOLUTION
  if (pred(x)) {
    // The old value of the counter is this element's slot: no other thread
    // receives it. Slots at or past the capacity are counted (the caller
    // learns how much room it needed) but never written.
    const unsigned long long slot = atomicAdd(count, 1ull);
    if (slot < capacity) out[slot] = x;
  }
  // STARTER:
  // // TODO(4.1): when pred(x) holds, take a slot with atomicAdd(count, 1ull)
  // // (it returns the old value) and write out[slot] = x only when
  // // slot < capacity.
  // END SOLUTION
}

}  // namespace

template <class T, class Pred>
void copy_if_global_atomic(const T* in, std::size_t n, Pred pred, T* out, std::size_t capacity,
                           unsigned long long* count, cudaStream_t stream) {
  if (!detail::start_copy_if("copy_if_global_atomic", in, n, out, capacity, count, stream)) return;
  global_atomic_kernel<<<blocks_for(n, kBlock), kBlock, 0, stream>>>(in, n, pred, out, capacity, count);
  CUDALAB_CHECK_LAUNCH();
}

}  // namespace cudalab::filter

CUDALAB_FILTER_INSTANTIATE(copy_if_global_atomic);
