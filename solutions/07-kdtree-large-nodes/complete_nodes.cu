// Exercise 7.5: node completion: children allocated on the node stack, their
// cells and point ranges filled, each pushed to the next or the small list.
// Lesson: chapters/07-kdtree-large-nodes/README.md, "7.5".
// Grade:  tools/grade 7.5      Hints: tools/grade --hint 7.5
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "cudalab/args.hpp"
#include "cudalab/error.cuh"
#include "cudalab/kdtree.cuh"

namespace cudalab::kdtree {
namespace {

constexpr int kBlock = 256;

// Given: a relaxed reservation of `amount` slots of a stack's counter
// (chapter 3, exercise 3.1): returns the first slot.
__device__ __forceinline__ long long reserve(long long* count, long long amount) {
  return static_cast<long long>(atomicAdd(reinterpret_cast<unsigned long long*>(count),
                                          static_cast<unsigned long long>(amount)));
}

// Given: push one node index on a list; past the capacity, set the flag and drop it.
__device__ __forceinline__ void push(const stack::DeviceStack<int>& list, int id) {
  const long long slot = reserve(list.count, 1);
  if (slot >= 0 && static_cast<unsigned long long>(slot) < list.capacity) {
    list.data[slot] = id;
  } else {
    atomicOr(list.errors, stack::kOverflow);
  }
}

__device__ __forceinline__ void set_coordinate(float3& p, int axis, float v) {
  if (axis == 0) p.x = v;
  else if (axis == 1) p.y = v;
  else p.z = v;
}

// Given: place a finished child: a range of points and a list, by the rule.
__device__ __forceinline__ void place(Node& child, int id, std::size_t threshold, int max_depth,
                                      const stack::DeviceStack<int>& next, const stack::DeviceStack<int>& small,
                                      unsigned long long* next_points, unsigned long long* small_points) {
  // BEGIN SOLUTION
  const bool large = child.count > threshold && child.depth < max_depth;
  child.begin = static_cast<unsigned>(atomicAdd(large ? next_points : small_points,
                                                static_cast<unsigned long long>(child.count)));
  push(large ? next : small, id);
  // STARTER:
  // // TODO(7.5): large = count > threshold and depth < max_depth; reserve
  // // child.begin with an atomicAdd of child.count on next_points (large) or
  // // small_points (small), then push(id) on next or small.
  // END SOLUTION
}

// Thread k completes nodes[active[k]].
__global__ void complete_nodes_kernel(stack::DeviceStack<Node> nodes, const int* __restrict__ active,
                                      const std::uint32_t* __restrict__ right_counts, std::size_t m,
                                      std::size_t threshold, int max_depth, stack::DeviceStack<int> next,
                                      stack::DeviceStack<int> small, unsigned long long* next_points,
                                      unsigned long long* small_points) {
  const std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (k >= m) return;
  Node& parent = nodes.data[active[k]];
  const Node p = parent;
  const unsigned rights = right_counts[k];
  // BEGIN SOLUTION
  const long long slot = reserve(nodes.count, 2);
  if (slot < 0 || static_cast<unsigned long long>(slot) + 2 > nodes.capacity) {
    atomicOr(nodes.errors, stack::kOverflow);  // no room for both children: write none
    parent.left = parent.right = -1;
    return;
  }
  Node left{p.box, -1, 0.0f, -1, -1, 0u, p.count - rights, p.depth + 1};
  Node right{p.box, -1, 0.0f, -1, -1, 0u, rights, p.depth + 1};
  set_coordinate(left.box.hi, p.axis, p.split);
  set_coordinate(right.box.lo, p.axis, p.split);
  const int li = static_cast<int>(slot);
  place(left, li, threshold, max_depth, next, small, next_points, small_points);
  place(right, li + 1, threshold, max_depth, next, small, next_points, small_points);
  nodes.data[li] = left;
  nodes.data[li + 1] = right;
  parent.left = li;
  parent.right = li + 1;
  // STARTER:
  // // TODO(7.5): reserve two slots with reserve(nodes.count, 2); when they do
  // // not both fit below nodes.capacity, set kOverflow in *nodes.errors, set
  // // parent.left = parent.right = -1 and return. Else build the left child
  // // (count - rights points, hi[axis] = split) and the right child (rights,
  // // lo[axis] = split), depth + 1, place() each, store them and link the parent.
  // END SOLUTION
}

void check_list(const char* what, const stack::DeviceStack<int>& list) {
  require_pointer("complete_nodes", what, list.data, list.capacity);
  require_pointer("complete_nodes", "a list's count", list.count, 1);
  require_pointer("complete_nodes", "a list's errors", list.errors, 1);
}

}  // namespace

void complete_nodes(stack::DeviceStack<Node> nodes, const int* active, const std::uint32_t* right_counts,
                    std::size_t m, std::size_t threshold, int max_depth, stack::DeviceStack<int> next,
                    stack::DeviceStack<int> small, unsigned long long* next_points, unsigned long long* small_points,
                    cudaStream_t stream) {
  require_count_at_most("complete_nodes", m, max_points);
  if (threshold == 0) throw std::invalid_argument("complete_nodes: threshold T = 0 (a node must hold at most T >= 1 points)");
  if (max_depth < 1) throw std::invalid_argument("complete_nodes: max_depth = " + std::to_string(max_depth) + " < 1");
  require_pointer("complete_nodes", "nodes.data", nodes.data, nodes.capacity);
  require_pointer("complete_nodes", "nodes.count", nodes.count, 1);
  require_pointer("complete_nodes", "nodes.errors", nodes.errors, 1);
  check_list("next.data", next);
  check_list("small.data", small);
  require_pointer("complete_nodes", "active", active, m);
  require_pointer("complete_nodes", "right_counts", right_counts, m);
  require_pointer("complete_nodes", "next_points", next_points, 1);
  require_pointer("complete_nodes", "small_points", small_points, 1);
  if (m == 0) return;
  const auto blocks = static_cast<unsigned>((m + kBlock - 1) / kBlock);
  complete_nodes_kernel<<<blocks, kBlock, 0, stream>>>(nodes, active, right_counts, m, threshold, max_depth, next,
                                                       small, next_points, small_points);
  CUDALAB_CHECK_LAUNCH();
}

}  // namespace cudalab::kdtree
