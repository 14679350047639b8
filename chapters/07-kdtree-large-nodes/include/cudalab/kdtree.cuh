/// @file kdtree.cuh
/// @brief Chapter 7, exercises 7.1 to 7.6: the building blocks of the
///        large-node stage of a GPU KD-tree build over 3-D points, with the
///        points, not the nodes, as the unit of parallelism (Zhou, Hou, Wang
///        and Guo, "Real-time KD-tree construction on graphics hardware",
///        ACM TOG 27(5), SIGGRAPH Asia 2008).
///
/// **The tree.** A node is a cell (an axis-aligned Box) and the points inside
/// it. The root's cell is the bounding box of all points (7.1). A large node
/// (more than T points) is cut in two by the plane through the middle of the
/// longest side of its cell (7.2); a point goes to the right child when its
/// coordinate is at least the split value, to the left otherwise (7.3); the
/// children's cells are the two halves of the parent's.
///
/// **A level.** The nodes being split together form the *active list*:
/// `active[0 .. m)`, indices into a node array `nodes`. Their points are
/// listed in one working array `idx[0 .. n)` of point indices (into the point
/// array `points`): the points of active node k are the *segment*
/// `idx[b .. b + c)` with `b = nodes[active[k]].begin` and
/// `c = nodes[active[k]].count`. The m segments are non-empty and cover
/// `[0, n)` exactly, in any order (they need not follow the active list).
/// 7.3 classifies every point of a level and counts each node's right
/// points; 7.4 reorders every segment so that its left points come first.
///
/// **Determinism.** Every value these functions produce is a function of
/// their inputs alone (no floating-point sums, no order of atomics), so the
/// CPU references in `kdtree_reference.hpp` reproduce them bit for bit.
///
/// Common errors of every launcher:
/// @throws std::invalid_argument when a pointer is null while its count is
///         > 0, or when a count exceeds max_points; nothing is launched and
///         nothing is written then.
/// @throws cudalab::CudaError when a CUDA call or a launch fails.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "cudalab/args.hpp"
#include "cudalab/stack.cuh"

/// @brief The GPU KD-tree build (chapter 7, exercises 7.1 to 7.6).
namespace cudalab::kdtree {

/// @brief The largest number of points one call accepts (2^31 − 1): point
///        indices are std::uint32_t and node ranges fit in int.
inline constexpr std::size_t max_points = static_cast<std::size_t>(std::numeric_limits<int>::max());

/// @brief An axis-aligned box, the closed set [lo.x, hi.x] × [lo.y, hi.y] ×
///        [lo.z, hi.z]. The empty box has lo = +inf and hi = −inf.
struct Box {
  float3 lo;  ///< smallest coordinate on each axis
  float3 hi;  ///< largest coordinate on each axis
};

/// @brief One node of the tree: its cell, its split and its points.
///
/// A node that is split (a large node) has axis 0, 1 or 2 (x, y, z), the
/// split value, and children `left` and `right` (indices into the node array)
/// whose cells are its cell cut at `split` on `axis`. A node that is not
/// split (a small node of the large-node stage) has axis = −1 and
/// left = right = −1.
struct Node {
  Box box;         ///< the node's cell: every one of its points lies inside it
  int axis;        ///< split axis 0, 1, 2; −1 when the node is not split
  float split;     ///< split value: points with coordinate ≥ split go right
  int left;        ///< left child (coordinate < split), −1 when none
  int right;       ///< right child (coordinate ≥ split), −1 when none
  unsigned begin;  ///< first position of the node's points in the level's working array
  unsigned count;  ///< number of points of the node
  int depth;       ///< 0 for the root
};

/// @brief Exercise 7.1: the bounding box of n points, and the index of the
///        first point with a coordinate that is NaN or infinite.
///
/// Writes `*box` = (componentwise minimum, componentwise maximum) of
/// `points[0 .. n)` over its finite points, and `*first_bad` = the smallest
/// index i whose point has a NaN or infinite coordinate, or n when every
/// point is finite. n = 0 writes the empty box and 0.
/// Min and max are exact, so the result does not depend on the order of the
/// reduction.
/// @param points    device array of n points
/// @param n         number of points, at most max_points
/// @param box       device pointer to one Box (output)
/// @param first_bad device pointer to one std::uint64_t (output)
/// @param stream    stream the kernels are enqueued on (asynchronous)
/// @throws std::invalid_argument on a null pointer or n > max_points.
/// @throws cudalab::CudaError when a CUDA call or a launch fails.
/// Work O(n), steps O(log n): a two-pass tree reduction (per-block partial
/// boxes, then one block over the partials). Source: the reductions of
/// chapter 1 (Harris, "Optimizing parallel reduction in CUDA", 2007) with
/// the operator (min, max, min); Zhou et al. 2008, section 4.1 (root box).
void bounding_box(const float3* points, std::size_t n, Box* box, std::uint64_t* first_bad,
                  cudaStream_t stream = nullptr);

/// @brief Exercise 7.2: the split of every active node: the spatial median
///        of the longest side of its cell.
///
/// For each k < m, with node = nodes[active[k]] and e = box.hi − box.lo:
/// axis = the axis of the largest e (ties go to the lower axis: x before y
/// before z) and split = 0.5f·lo + 0.5f·hi on that axis, each product rounded
/// to float before the sum (so no overflow, and the same bits on the CPU).
/// Writes only `axis` and `split` of the active nodes.
/// @param nodes  device node array (reads box, writes axis and split)
/// @param active device array of m distinct node indices
/// @param m      number of active nodes, at most max_points
/// @param stream stream the kernel is enqueued on (asynchronous)
/// @throws std::invalid_argument on a null pointer with m > 0 or m > max_points.
/// @throws cudalab::CudaError when a CUDA call or a launch fails.
/// Work O(m), one step. Source: Zhou et al. 2008, section 4.1 (median split
/// of large nodes); the lesson adds their empty-space cutting as a variant.
void select_splits(Node* nodes, const int* active, std::size_t m, cudaStream_t stream = nullptr);

/// @brief Exercise 7.3: classify every point of a level and count each
///        active node's right points, with segmented scans.
///
/// For each position i < n of the working array (see the file description),
/// with k the active node whose segment holds i and node = nodes[active[k]]:
/// `right_flags[i]` = 1 when `points[idx[i]]` has coordinate ≥ node.split on
/// node.axis, else 0; and `right_counts[k]` = the number of right points of
/// segment k. The node of each position is found by a segmented scan
/// (broadcast of k from the segment's head) and the counts by a segmented
/// scan of the flags, read at each segment's last position.
/// @param points       device array of points (every idx[i] indexes it)
/// @param idx          device working array of n point indices
/// @param n            number of positions, at most max_points
/// @param nodes        device node array (reads axis, split, begin, count)
/// @param active       device array of m node indices whose segments cover [0, n)
/// @param m            number of active nodes (0 only when n = 0)
/// @param right_flags  device array of n flags (output)
/// @param right_counts device array of m counts (output)
/// @param stream       stream the kernels are enqueued on (asynchronous)
/// @param owners       optional device array of n (output): when not null it
///                     receives the broadcast, k at every position of segment
///                     k, so that the later steps of the level (7.4 and 7.6)
///                     reuse it instead of computing it again
/// @throws std::invalid_argument on a null pointer (other than owners), n > max_points, m = 0 with n > 0, or m > n.
/// @throws cudalab::CudaError when a CUDA call or a launch fails.
/// Work O(n + m), steps O(log n). Source: Zhou et al. 2008, section 4.1
/// (classification and counting by segmented scan); Blelloch, "Prefix sums
/// and their applications", 1990, and Sengupta, Harris, Zhang and Owens,
/// "Scan primitives for GPU computing", 2007 (segmented scan).
void classify_and_count(const float3* points, const std::uint32_t* idx, std::size_t n, const Node* nodes,
                        const int* active, std::size_t m, std::uint8_t* right_flags,
                        std::uint32_t* right_counts, cudaStream_t stream = nullptr,
                        std::uint32_t* owners = nullptr);

/// @brief The segmented inclusive sum of exercise 7.3's file, which 7.4 and
///        7.6 call: `out[i]` = the sum of `in[j]` over the positions j ≤ i of
///        i's segment, a segment starting at every i with `heads[i]` ≠ 0.
///
/// Defined in 7.3's file (its operator and warp scan are 7.3's exercise).
/// An exercise that calls it lists 7.3 under `uses` in the manifest, and is
/// linked with 7.3's reference solution where the course has `solutions/`,
/// else with the student's own 7.3. Position 0 always starts a segment; sums
/// wrap modulo 2^32.
/// @param in     device array of n values
/// @param heads  device array of n head flags (non-zero: a segment starts here)
/// @param n      number of positions, at most max_points
/// @param out    device array of n sums (output); may be `in` itself
/// @param stream stream the kernels are enqueued on (asynchronous)
/// @throws std::invalid_argument on a null pointer with n > 0 or n > max_points.
/// @throws cudalab::CudaError when a CUDA call or a launch fails.
/// Work O(n), steps O(log n): three passes (tiles of 1024, the tile totals
/// in one block, the carries). Source: Sengupta, Harris, Zhang and Owens,
/// "Scan primitives for GPU computing", 2007.
void segmented_inclusive_sum(const std::uint32_t* in, const std::uint8_t* heads, std::size_t n,
                             std::uint32_t* out, cudaStream_t stream = nullptr);

/// @brief Marks the head of every active node's segment for
///        segmented_inclusive_sum (7.3's file; 7.4 calls it).
///
/// For each k < m with b = nodes[active[k]].begin: `heads[b]` = 1 and, when
/// `owners` is not null, `owners[b]` = k. Nothing else is written: the
/// caller zeroes both arrays first, so that a segmented sum of `owners`
/// then writes k over the whole segment k (the broadcast).
/// @param nodes  device node array (reads begin)
/// @param active device array of m node indices
/// @param m      number of active nodes, at most max_points
/// @param heads  device array of the level's n head flags (output)
/// @param owners device array of n (output), or null
/// @param stream stream the kernel is enqueued on (asynchronous)
/// @throws std::invalid_argument on a null pointer (other than owners) with m > 0, or m > max_points.
/// @throws cudalab::CudaError when a CUDA call or a launch fails.
/// Work O(m), one step.
void mark_segment_heads(const Node* nodes, const int* active, std::size_t m, std::uint8_t* heads,
                        std::uint32_t* owners, cudaStream_t stream = nullptr);

/// @brief Exercise 7.4: the segmented split: a stable partition of every
///        segment of the working array by its flags, composed from scans.
///
/// For each active node k with segment [b, b + c): `out[b .. b + c)` holds
/// first the entries `in[i]` of the segment with `right_flags[i] = 0`, then
/// those with `right_flags[i] = 1`, each group in its input order. A
/// position's rank among the segment's right entries comes from a segmented
/// exclusive scan of the flags, its segment and the segment's right total
/// from a segmented scan broadcast.
/// @param in          device working array of n point indices
/// @param right_flags device array of n flags (0 or 1)
/// @param n           number of positions, at most max_points
/// @param nodes       device node array (reads begin and count)
/// @param active      device array of m node indices whose segments cover [0, n)
/// @param m           number of active nodes (0 only when n = 0)
/// @param out         device array of n point indices (output; must not overlap in)
/// @param stream      stream the kernels are enqueued on (asynchronous)
/// @param owners      optional device array of n: the broadcast of this
///                    level's segments (k at every position of segment k, as
///                    7.3 writes it); when not null it is used instead of
///                    this function's own broadcast (one segmented scan fewer)
/// @throws std::invalid_argument on a null pointer (other than owners), n > max_points, m = 0 with n > 0, or m > n.
/// @throws cudalab::CudaError when a CUDA call or a launch fails.
/// Work O(n + m), steps O(log n). Source: Zhou et al. 2008, section 4.1
/// (split of the triangle lists); Blelloch 1990, section 1.5 (split by scans).
void segmented_split(const std::uint32_t* in, const std::uint8_t* right_flags, std::size_t n, const Node* nodes,
                     const int* active, std::size_t m, std::uint32_t* out, cudaStream_t stream = nullptr,
                     const std::uint32_t* owners = nullptr);

/// @brief Exercise 7.5: node completion: allocate the two children of every
///        active node on the node stack, fill their cells, counts and depths,
///        give each its range of points, and push it to the next list or the
///        small list.
///
/// For each k < m, with parent = nodes.data[active[k]] (axis and split set
/// by 7.2, count the parent's, R = right_counts[k] as 7.3 counts them):
/// - two consecutive slots s, s + 1 are reserved with one atomic add of 2 on
///   `*nodes.count`; when s + 2 exceeds `nodes.capacity`, kOverflow is set in
///   `*nodes.errors`, parent.left = parent.right = −1 and nothing else is
///   written (never a slot at or past the capacity);
/// - otherwise node s is the left child (count − R points, cell = the
///   parent's with hi[axis] = split) and s + 1 the right one (R points, lo[axis]
///   = split), both with depth = parent.depth + 1, axis = −1, left = right =
///   −1; parent.left = s, parent.right = s + 1;
/// - a child is *large* when its count exceeds `threshold` and its depth is
///   below `max_depth`: it reserves `begin` = an atomic add of its count on
///   `*next_points` and is pushed on `next`; otherwise it is *small*:
///   `begin` from `*small_points`, pushed on `small`. A push past a list's
///   capacity sets that list's kOverflow flag and writes nothing.
///
/// Which slot, begin and list position a node receives depends on the order
/// of the atomics; the set of children, their cells, counts and depths, and
/// the ranges' lengths do not.
/// @param nodes        the node array as a chapter 3 stack: slots [0, *count) are in use
/// @param active       device array of m node indices below the node count
/// @param right_counts device array of m right counts (each at most its node's count)
/// @param m            number of active nodes
/// @param threshold    T: a child with more points is large (T ≥ 1)
/// @param max_depth    a child at this depth is small whatever its count (≥ 1)
/// @param next         the next list (node indices of the large children)
/// @param small        the small list (node indices of the small children)
/// @param next_points  device counter of the points given to large nodes so far
/// @param small_points device counter of the points given to small nodes so far
/// @param stream       stream the kernel is enqueued on (asynchronous)
/// @throws std::invalid_argument on a null pointer with m > 0, m > max_points,
///         threshold = 0 or max_depth < 1.
/// @throws cudalab::CudaError when a CUDA call or a launch fails.
/// Work O(m), one step (atomics on five counters). Source: Zhou et al. 2008,
/// section 4.1 (node creation); the bump-allocated stack of chapter 3.
void complete_nodes(stack::DeviceStack<Node> nodes, const int* active, const std::uint32_t* right_counts,
                    std::size_t m, std::size_t threshold, int max_depth, stack::DeviceStack<int> next,
                    stack::DeviceStack<int> small, unsigned long long* next_points, unsigned long long* small_points,
                    cudaStream_t stream = nullptr);

/// @brief What the large-node stage reports about one level.
struct LevelInfo {
  std::size_t active;  ///< large nodes split at this level
  std::size_t points;  ///< points in those nodes (the level's working array)
  float ms;            ///< GPU time of the level in milliseconds (CUDA events), −1 when not timed
};

/// @brief The result of build_large_nodes (host side).
struct LargeNodeStage {
  std::size_t nodes = 0;          ///< nodes written: nodes[0 .. nodes), node 0 is the root
  std::size_t small = 0;          ///< small nodes listed: small[0 .. small)
  int depth = 0;                  ///< the largest node depth (= the number of levels)
  std::vector<LevelInfo> levels;  ///< one entry per level of large nodes
};

/// @brief Exercise 7.6: the large-node stage: split levels of large nodes
///        until none remains; output the node array and the small-node list.
///
/// The root is the bounding box of the n points (7.1). While the active list
/// is not empty: choose the splits (7.2), classify and count (7.3), split the
/// working array (7.4), complete the nodes (7.5), move every point to its
/// child's range (in the next working array, or in `leaf_points` for a small
/// child), and swap the active and next lists. The rule is that of
/// cudalab::reference::build, so the node count, the small count, the depth
/// and the per-level counts equal the reference's; node numbering and point
/// ranges depend on the order of atomics.
///
/// Output: nodes[0 .. result.nodes): split nodes with axis, split and
/// children (their `begin` is their position in their level's working
/// array); small nodes with axis = −1, whose points are
/// `leaf_points[begin .. begin + count)`. small[0 .. result.small): the
/// small nodes' indices. Every point index appears once in leaf_points.
///
/// **Synchronous**: reads the list lengths after every level.
/// @param points        device array of n points with finite coordinates
/// @param n             number of points, 1 to max_points
/// @param threshold     T: nodes with more points are split (T ≥ 1)
/// @param max_depth     nodes at this depth are never split (0 to 64)
/// @param nodes         device array of node_capacity nodes (output)
/// @param node_capacity room in nodes (and in small) (≥ 1)
/// @param small         device array of node_capacity node indices (output)
/// @param leaf_points   device array of n point indices (output)
/// @param stream        the stream the work runs on
/// @param time_levels   record each level's GPU time with CUDA events
/// @return the counts, the depth and the per-level figures
/// @throws std::invalid_argument when n = 0, n > max_points, threshold = 0,
///         max_depth is outside [0, 64], node_capacity = 0, a pointer is null,
///         or a point has a NaN or infinite coordinate (the message names the
///         first such index; nothing is written then).
/// @throws std::length_error when the node array overflows: the message
///         names the level and the capacity; nothing is written past
///         node_capacity in nodes or small.
/// @throws cudalab::CudaError when a CUDA call or a launch fails.
/// Work O(n · depth), steps O(depth · log n). Source: Zhou et al. 2008,
/// section 4.1, algorithm "large node stage".
LargeNodeStage build_large_nodes(const float3* points, std::size_t n, std::size_t threshold, int max_depth,
                                 Node* nodes, std::size_t node_capacity, int* small, std::uint32_t* leaf_points,
                                 cudaStream_t stream = nullptr, bool time_levels = false);

namespace detail {
/// Checks the sizes common to 7.3 and 7.4 (throws std::invalid_argument).
inline void check_level(const char* function, std::size_t n, const void* nodes, const void* active,
                        std::size_t m) {
  require_count_at_most(function, n, max_points);
  require_count_at_most(function, m, max_points);
  if (n > 0 && m == 0)
    throw std::invalid_argument(std::string(function) + ": n = " + std::to_string(n) +
                                " positions but no active node (m = 0): the segments must cover [0, n)");
  if (m > n)
    throw std::invalid_argument(std::string(function) + ": m = " + std::to_string(m) + " active nodes for n = " +
                                std::to_string(n) + " positions: every segment must be non-empty");
  require_pointer(function, "nodes", nodes, m);
  require_pointer(function, "active", active, m);
}
}  // namespace detail

}  // namespace cudalab::kdtree
