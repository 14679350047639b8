// RED TEAM: 5.2 without the shuffle reduction: min_child is the given nodes'
// RED TEAM: (cudalab/heap_nodes.cuh, whose min_child is the course's reference solution
// RED TEAM: of 5.2, given to 5.3), called as device::min_child inside namespace cudalab::heap.
// Exercise 5.2: min_child, the child with the smallest top, by a shuffle reduction.
// Lesson: chapters/05-warp-heap/README.md, "5.2".
// Grade:  tools/grade 5.2      Hints: tools/grade --hint 5.2
#include <climits>

#include "cudalab/error.cuh"
#include "cudalab/heap.cuh"
#include "cudalab/warp.cuh"
#include "cudalab/heap_nodes.cuh"
// @REDTEAM_LIB@

namespace cudalab::heap {
namespace {

constexpr int kBlock = 256;  // a multiple of 32: every warp is whole
constexpr int kWarpsPerBlock = kBlock / 32;

// Called by all 32 lanes of a warp with the same parent and node_count.
// top_keys[i], top_values[i] are the top of node i (in the heap, a cache in
// shared memory). Returns to every lane the child of `parent` (node
// 32 parent + 1 + j, j = 0 .. 31, when below node_count) whose top is the
// smallest by entry_less, the smallest index among equal tops; -1 when
// `parent` has no child.
__device__ __forceinline__ int min_child(const float* top_keys, const int* top_values, int parent, int node_count) {
  return device::min_child(top_keys, top_values, parent, node_count);  // the given nodes'
}

// Warp q answers query q.
__global__ void min_child_kernel(const float* __restrict__ top_keys, const int* __restrict__ top_values,
                                 int node_count, const int* __restrict__ parents, std::size_t n_queries,
                                 int* __restrict__ children) {
  const std::size_t q = (blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x) / 32;
  if (q >= n_queries) return;  // whole warps leave together
  const int c = min_child(top_keys, top_values, parents[q], node_count);
  if ((threadIdx.x & 31u) == 0) children[q] = c;
}

}  // namespace

void min_child(const float* top_keys, const int* top_values, std::size_t node_count, const int* parents,
               std::size_t n_queries, int* children, cudaStream_t stream) {
  constexpr const char* f = "min_child";
  require_count_at_most(f, node_count, max_items);
  require_count_at_most(f, n_queries, max_items);
  require_pointer(f, "top_keys", top_keys, node_count);
  require_pointer(f, "top_values", top_values, node_count);
  require_pointer(f, "parents", parents, n_queries);
  require_pointer(f, "children", children, n_queries);
  if (n_queries == 0) return;
  const auto blocks = static_cast<unsigned>((n_queries + kWarpsPerBlock - 1) / kWarpsPerBlock);
  min_child_kernel<<<blocks, kBlock, 0, stream>>>(top_keys, top_values, static_cast<int>(node_count), parents,
                                                  n_queries, children);
  CUDALAB_CHECK_LAUNCH();
}

}  // namespace cudalab::heap
