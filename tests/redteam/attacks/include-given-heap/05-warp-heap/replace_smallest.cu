// RED TEAM: 5.1 without the node operation: replace_smallest is the given heap's
// RED TEAM: (cudalab/warp_heap.cuh, the course's reference solution of 5.1 to 5.3,
// RED TEAM: given to 5.4), called as device::replace_smallest inside namespace cudalab::heap.
// Exercise 5.1: replace_smallest on a warp-sorted node of 32 entries.
// Lesson: chapters/05-warp-heap/README.md, "5.1".
// Grade:  tools/grade 5.1      Hints: tools/grade --hint 5.1
#include "cudalab/error.cuh"
#include "cudalab/heap.cuh"
#include "cudalab/warp.cuh"
#include "cudalab/warp_heap.cuh"
// @REDTEAM_LIB@

namespace cudalab::heap {
namespace {

constexpr int kBlock = 256;  // a multiple of 32: every warp is whole
constexpr int kWarpsPerBlock = kBlock / 32;

// Lane src's entry e, to every lane of the warp (called by all 32 lanes).
__device__ __forceinline__ Entry shfl_entry(const Entry& e, int src) {
  return {__shfl_sync(kFullMask, e.key, src), __shfl_sync(kFullMask, e.value, src)};
}

// Called by all 32 lanes of a warp with the same x. The warp holds one node,
// lane l's entry in `mine`, sorted ascending across the lanes by
// entry_less. Inserts x, removes the smallest of the 33 entries and returns
// it to every lane; the node stays sorted.
__device__ __forceinline__ Entry replace_smallest(Entry& mine, Entry x) {
  return device::replace_smallest(mine, x);  // the given heap's
}

// Warp w replaces the smallest of node w by x[w].
__global__ void replace_smallest_kernel(float* __restrict__ keys, int* __restrict__ values, std::size_t n_nodes,
                                        const float* __restrict__ x_keys, const int* __restrict__ x_values,
                                        float* __restrict__ evicted_keys, int* __restrict__ evicted_values) {
  const std::size_t w = (blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x) / 32;
  if (w >= n_nodes) return;  // whole warps leave together
  const std::size_t i = w * node_size + (threadIdx.x & 31u);
  Entry mine{keys[i], values[i]};
  const Entry evicted = replace_smallest(mine, Entry{x_keys[w], x_values[w]});
  keys[i] = mine.key;
  values[i] = mine.value;
  if ((threadIdx.x & 31u) == 0) {
    evicted_keys[w] = evicted.key;
    evicted_values[w] = evicted.value;
  }
}

}  // namespace

void replace_smallest(float* node_keys, int* node_values, std::size_t n_nodes, const float* x_keys,
                      const int* x_values, float* evicted_keys, int* evicted_values, cudaStream_t stream) {
  constexpr const char* f = "replace_smallest";
  require_count_at_most(f, n_nodes, max_items);
  require_pointer(f, "node_keys", node_keys, n_nodes);
  require_pointer(f, "node_values", node_values, n_nodes);
  require_pointer(f, "x_keys", x_keys, n_nodes);
  require_pointer(f, "x_values", x_values, n_nodes);
  require_pointer(f, "evicted_keys", evicted_keys, n_nodes);
  require_pointer(f, "evicted_values", evicted_values, n_nodes);
  if (n_nodes == 0) return;
  const auto blocks = static_cast<unsigned>((n_nodes + kWarpsPerBlock - 1) / kWarpsPerBlock);
  replace_smallest_kernel<<<blocks, kBlock, 0, stream>>>(node_keys, node_values, n_nodes, x_keys, x_values,
                                                          evicted_keys, evicted_values);
  CUDALAB_CHECK_LAUNCH();
}

}  // namespace cudalab::heap
