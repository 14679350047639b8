// Exercise 7.2: the split of every active node: the spatial median of the
// longest side of its cell.
// Lesson: chapters/07-kdtree-large-nodes/README.md, "7.2".
// Grade:  tools/grade 7.2      Hints: tools/grade --hint 7.2
#include <cstddef>

#include "cudalab/args.hpp"
#include "cudalab/error.cuh"
#include "cudalab/kdtree.cuh"

namespace cudalab::kdtree {
namespace {

constexpr int kBlock = 256;

// Thread k chooses the split of nodes[active[k]].
__global__ void select_splits_kernel(Node* nodes, const int* __restrict__ active, std::size_t m) {
  const std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (k >= m) return;
  Node& node = nodes[active[k]];
  const Box box = node.box;
  const float lo[3] = {box.lo.x, box.lo.y, box.lo.z};
  const float hi[3] = {box.hi.x, box.hi.y, box.hi.z};
  // TODO(7.2): axis = the axis of the longest side hi[a] - lo[a] (ties: the
  // lower axis); split = 0.5 lo + 0.5 hi on it, each half rounded with
  // __fmul_rn before the sum. Write node.axis and node.split.
  node.axis = -1;
}

}  // namespace

void select_splits(Node* nodes, const int* active, std::size_t m, cudaStream_t stream) {
  require_count_at_most("select_splits", m, max_points);
  require_pointer("select_splits", "nodes", nodes, m);
  require_pointer("select_splits", "active", active, m);
  if (m == 0) return;
  const auto blocks = static_cast<unsigned>((m + kBlock - 1) / kBlock);
  select_splits_kernel<<<blocks, kBlock, 0, stream>>>(nodes, active, m);
  CUDALAB_CHECK_LAUNCH();
}

}  // namespace cudalab::kdtree
