// Exercise 7.6: the large-node stage: levels of large nodes split, with the
// active and next lists swapped, until no large node remains.
// Lesson: chapters/07-kdtree-large-nodes/README.md, "7.6".
// Grade:  tools/grade 7.6      Hints: tools/grade --hint 7.6
//
// Given (outside the exercise): the functions of 7.1 to 7.5, called through
// their API (cudalab/kdtree.cuh) and linked with their reference solutions
// (the manifest's `uses`), so that 7.6 does not depend on the student's own
// 7.1 to 7.5; and the kernels that start the stage and move the points.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

#include "cudalab/args.hpp"
#include "cudalab/async_buffer.cuh"
#include "cudalab/error.cuh"
#include "cudalab/kdtree.cuh"
#include "cudalab/timer.cuh"

namespace cudalab::kdtree {
namespace {

// Given: the kernels and helpers of the stage.

constexpr int kStageBlock = 256;

unsigned blocks_for(std::size_t n) { return static_cast<unsigned>((n + kStageBlock - 1) / kStageBlock); }

__global__ void iota_kernel(std::uint32_t* out, std::size_t n) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = static_cast<std::uint32_t>(i);
}

// Position i of the split working array (7.4's output): its node is
// nodes[active[owner[i]]]; the first count - rights positions of the segment
// go to the left child, the others to the right child, each to position
// (i - first position of its side) of the child's range, in the next working
// array when the child is large, in leaf_points when it is small. A parent
// without children (node array overflow) moves nothing.
__global__ void move_points_kernel(const std::uint32_t* __restrict__ split_idx, std::size_t n,
                                   const Node* __restrict__ nodes, const int* __restrict__ active,
                                   const std::uint32_t* __restrict__ owner, const std::uint32_t* __restrict__ rights,
                                   std::size_t threshold, int max_depth, std::uint32_t* __restrict__ next_idx,
                                   std::uint32_t* __restrict__ leaf_points) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const int k = static_cast<int>(owner[i]);
  const Node& p = nodes[active[k]];
  if (p.left < 0) return;
  const std::size_t lefts = p.count - rights[k], offset = i - p.begin;
  const bool right = offset >= lefts;
  const Node& child = nodes[right ? p.right : p.left];
  const std::size_t local = right ? offset - lefts : offset;
  const bool large = child.count > threshold && child.depth < max_depth;
  (large ? next_idx : leaf_points)[child.begin + local] = split_idx[i];
}

// The four numbers the host needs after a level, gathered on the device so
// that one copy (one synchronization) brings them back.
struct LevelCounters {
  long long nodes;                ///< the node stack's counter
  long long next;                 ///< the next list's counter
  unsigned long long next_points; ///< points in the next level's working array
  unsigned errors;                ///< the node stack's error word
};

__global__ void gather_counters_kernel(const long long* node_count, const unsigned* node_errors,
                                       const long long* next_count, const unsigned long long* next_points,
                                       LevelCounters* out) {
  *out = LevelCounters{*node_count, *next_count, *next_points, *node_errors};
}

// Enqueues the gather and reads the counters back (synchronizes the stream).
LevelCounters read_counters(const long long* node_count, const unsigned* node_errors, const long long* next_count,
                            const unsigned long long* next_points, LevelCounters* scratch, cudaStream_t stream) {
  gather_counters_kernel<<<1, 1, 0, stream>>>(node_count, node_errors, next_count, next_points, scratch);
  CUDALAB_CHECK_LAUNCH();
  return stack::detail::read_device_value(scratch, stream);
}

// Every counter and error word of the stage in one device block: one
// allocation, one memset to zero, and start_stage_kernel sets the others.
struct StageCounters {
  long long node_count;            ///< the node stack's counter
  long long small_count;           ///< the small list's counter
  long long list_count[2];         ///< the counters of the active and next lists
  unsigned node_errors;            ///< the node stack's error word
  unsigned small_errors;           ///< the small list's error word
  unsigned list_errors[2];         ///< the lists' error words
  unsigned long long points[2];    ///< next_points, small_points
  LevelCounters level;             ///< what read_counters brings back
  Box root_box;                    ///< 7.1's output
  std::uint64_t first_bad;         ///< 7.1's first bad index
};

// Writes the root (the box of 7.1, all n points, depth 0) and starts the
// stacks: when the root is small, small[0] = 0; otherwise the node count is
// 1 and the active list holds the root alone. One thread: no host copies.
__global__ void start_stage_kernel(StageCounters* c, Node* nodes, std::size_t n, bool root_is_small, int* small,
                                   int* active) {
  nodes[0] = Node{c->root_box, -1, 0.0f, -1, -1, 0u, static_cast<unsigned>(n), 0};
  c->node_count = 1;
  if (root_is_small) {
    small[0] = 0;
    c->small_count = 1;
  } else {
    active[0] = 0;
    c->list_count[0] = 1;
  }
}

}  // namespace

LargeNodeStage build_large_nodes(const float3* points, std::size_t n, std::size_t threshold, int max_depth,
                                 Node* nodes, std::size_t node_capacity, int* small, std::uint32_t* leaf_points,
                                 cudaStream_t stream, bool time_levels) {
  const char* fn = "build_large_nodes";
  if (n == 0) throw std::invalid_argument(std::string(fn) + ": no points (n = 0)");
  require_count_at_most(fn, n, max_points);
  if (threshold == 0) throw std::invalid_argument(std::string(fn) + ": threshold T = 0 (a leaf must hold at most T >= 1 points)");
  if (max_depth < 0 || max_depth > 64)
    throw std::invalid_argument(std::string(fn) + ": max_depth = " + std::to_string(max_depth) + " is outside [0, 64]");
  if (node_capacity == 0) throw std::invalid_argument(std::string(fn) + ": node_capacity = 0 (the root needs a node)");
  require_count_at_most(fn, node_capacity, max_points);
  require_pointer(fn, "points", points, n);
  require_pointer(fn, "nodes", nodes, node_capacity);
  require_pointer(fn, "small", small, node_capacity);
  require_pointer(fn, "leaf_points", leaf_points, n);

  // Scratch of the stage from the stream-ordered pool: no cudaMalloc, no
  // cudaFree (which would synchronize the device), memory kept between calls.
  cudalab::detail::keep_pool_memory(std::uint64_t{24} * n + std::uint64_t{16} * node_capacity + (std::uint64_t{16} << 20));
  AsyncBuffer<StageCounters> block(1, stream);
  StageCounters* st = block.data();
  CUDALAB_CHECK(cudaMemsetAsync(st, 0, sizeof(StageCounters), stream));

  // The root: its box, and the check of the input, before anything is written.
  bounding_box(points, n, &st->root_box, &st->first_bad, stream);
  const std::uint64_t bad = stack::detail::read_device_value(&st->first_bad, stream);
  if (bad < n)
    throw std::invalid_argument(std::string(fn) + ": point " + std::to_string(bad) +
                                " has a NaN or infinite coordinate");
  const bool root_is_small = n <= threshold || max_depth == 0;
  // The node array, the small list and the active and next lists of node
  // indices are chapter 3 stacks; all their counters are in `block`.
  AsyncBuffer<int> list_data(root_is_small ? 0 : 2 * node_capacity, stream);
  start_stage_kernel<<<1, 1, 0, stream>>>(st, nodes, n, root_is_small, small, list_data.data());
  CUDALAB_CHECK_LAUNCH();
  LargeNodeStage result;
  result.nodes = 1;
  if (root_is_small) {
    iota_kernel<<<blocks_for(n), kStageBlock, 0, stream>>>(leaf_points, n);
    CUDALAB_CHECK_LAUNCH();
    CUDALAB_CHECK(cudaStreamSynchronize(stream));
    result.small = 1;
    return result;
  }
  const stack::DeviceStack<Node> node_stack{nodes, node_capacity, &st->node_count, &st->node_errors};
  const stack::DeviceStack<int> small_stack{small, node_capacity, &st->small_count, &st->small_errors};
  stack::DeviceStack<int> active_list{list_data.data(), node_capacity, &st->list_count[0], &st->list_errors[0]};
  stack::DeviceStack<int> next_list{list_data.data() + node_capacity, node_capacity, &st->list_count[1],
                                    &st->list_errors[1]};
  // Working arrays: the level's point indices, the split ones, the owners (7.3's broadcast), flags, right counts.
  AsyncBuffer<std::uint32_t> work(n, stream), split(n, stream), owner(n, stream), rights(node_capacity, stream);
  AsyncBuffer<std::uint8_t> flags(n, stream);
  unsigned long long* next_points = &st->points[0];
  unsigned long long* small_points = &st->points[1];
  LevelCounters* counters = &st->level;
  iota_kernel<<<blocks_for(n), kStageBlock, 0, stream>>>(work.data(), n);
  CUDALAB_CHECK_LAUNCH();
  EventTimer timer;

  // BEGIN SOLUTION
  std::size_t m = 1, level_points = n;  // the root is the one active node
  for (int level = 0; m > 0; ++level) {
    if (time_levels) timer.start(stream);
    select_splits(nodes, active_list.data, m, stream);
    classify_and_count(points, work.data(), level_points, nodes, active_list.data, m, flags.data(), rights.data(),
                       stream, owner.data());
    segmented_split(work.data(), flags.data(), level_points, nodes, active_list.data, m, split.data(), stream,
                    owner.data());
    CUDALAB_CHECK(cudaMemsetAsync(next_list.count, 0, sizeof(long long), stream));
    CUDALAB_CHECK(cudaMemsetAsync(next_points, 0, sizeof(unsigned long long), stream));
    complete_nodes(node_stack, active_list.data, rights.data(), m, threshold, max_depth, next_list, small_stack,
                   next_points, small_points, stream);
    move_points_kernel<<<blocks_for(level_points), kStageBlock, 0, stream>>>(
        split.data(), level_points, nodes, active_list.data, owner.data(), rights.data(), threshold, max_depth,
        work.data(), leaf_points);
    CUDALAB_CHECK_LAUNCH();
    float ms = -1.0f;
    if (time_levels) {
      timer.stop(stream);
      ms = timer.elapsed_ms();
    }
    result.levels.push_back({m, level_points, ms});
    const LevelCounters c =
        read_counters(node_stack.count, node_stack.errors, next_list.count, next_points, counters, stream);
    if (c.errors != 0)
      throw std::length_error(std::string(fn) + ": the node array of capacity " + std::to_string(node_capacity) +
                              " is full at level " + std::to_string(level) + " (" + std::to_string(c.nodes) +
                              " nodes needed so far)");
    result.nodes = static_cast<std::size_t>(c.nodes);
    result.depth = level + 1;
    m = static_cast<std::size_t>(c.next);
    level_points = static_cast<std::size_t>(c.next_points);
    std::swap(active_list, next_list);
  }
  // STARTER:
  // // TODO(7.6): m = 1 active node (the root), level_points = n; while m > 0:
  // // the splits (select_splits, 7.2), classification (classify_and_count,
  // // 7.3, with `owner` as its owners output), the split of the working
  // // array into `split` (segmented_split, 7.4, reusing `owner`), reset the
  // // next list's count and *next_points, complete the nodes (complete_nodes, 7.5),
  // // move_points_kernel (writing the next level into `work`),
  // // record result.levels / nodes / depth, read_counters (into `counters`),
  // // throw std::length_error when its error word is set, take the next m
  // // and level_points from it, swap the lists.
  // END SOLUTION
  result.small = static_cast<std::size_t>(stack::detail::read_device_value(small_stack.count, stream));
  return result;
}

}  // namespace cudalab::kdtree
