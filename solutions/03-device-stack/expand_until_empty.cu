// Exercise 3.4: double-buffered work lists, expanded level by level until empty.
// Lesson: chapters/03-device-stack/README.md, "3.4".
// Grade:  tools/grade 3.4      Hints: tools/grade --hint 3.4
#include <cuda/atomic>

#include <stdexcept>
#include <string>

#include "cudalab/error.cuh"
#include "cudalab/stack.cuh"
#include "cudalab/warp.cuh"

namespace cudalab::stack {
namespace {

constexpr int kBlock = 256;  // a multiple of 32: every warp is whole

// Called by all 32 lanes of a warp; lane l pushes its `k` items (0, 1 or 2:
// first, then second) into `next`. The counts differ from lane to lane, so the
// compiler cannot aggregate the atomics by itself: reserve the whole warp's
// items with one atomic and place each lane's items by an exclusive scan.
__device__ void push_children(DeviceStack<int> next, int k, int first, int second) {
  // BEGIN SOLUTION
  const unsigned lane = lane_id();
  int inclusive = k;  // Hillis-Steele scan over the warp: 5 shuffles
  for (unsigned d = 1; d < 32; d *= 2) {
    const int up = __shfl_up_sync(kFullMask, inclusive, d);
    if (lane >= d) inclusive += up;
  }
  const int total = __shfl_sync(kFullMask, inclusive, 31);
  if (total == 0) return;  // warp-uniform: every lane leaves together
  long long base = 0;
  if (lane == 31) {
    cuda::atomic_ref<long long, cuda::thread_scope_device> count(*next.count);
    base = count.fetch_add(total, cuda::memory_order_relaxed);
  }
  base = __shfl_sync(kFullMask, base, 31);
  const long long slot = base + (inclusive - k);  // exclusive prefix: the items of lower lanes
  for (int j = 0; j < k; ++j) {
    const long long s = slot + j;
    if (s >= 0 && static_cast<unsigned long long>(s) < next.capacity) {
      next.data[s] = j == 0 ? first : second;
    } else {
      cuda::atomic_ref<unsigned, cuda::thread_scope_device> errors(*next.errors);
      errors.fetch_or(kOverflow, cuda::memory_order_relaxed);
    }
  }
  // STARTER:
  // // TODO(3.4): push this lane's k items (first, then second) into `next`:
  // // either one atomic per item as in 3.1, or (faster) one per warp: an
  // // exclusive warp scan of k with __shfl_up_sync gives each lane's offset,
  // // one lane reserves the warp's total with a fetch_add on *next.count.
  // // Slots outside [0, next.capacity) set kOverflow and are not written.
  // END SOLUTION
}

// One level: thread i copies active[i] to visited[i] and pushes the existing
// children of node active[i] (2v first, then 2v + 1) into `next`. No thread
// returns early: push_children needs every lane of the warp.
__global__ void expand_level_kernel(const int* __restrict__ active, std::size_t n, DeviceStack<int> next,
                                    TreeRule rule, int* __restrict__ visited) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  const bool live = i < n;
  const int v = live ? active[i] : 0;
  if (live) visited[i] = v;
  const bool left = live && has_child(rule, v, 0);
  const bool right = live && has_child(rule, v, 1);
  const int k = static_cast<int>(left) + static_cast<int>(right);
  // 2v + 1 is computed only for nodes that have a child (then v < 2^30): no overflow.
  const int first = left ? 2 * v : (right ? 2 * v + 1 : 0);
  push_children(next, k, first, right ? 2 * v + 1 : 0);
}

void launch_level(const int* active, std::size_t n, DeviceStack<int> next, const TreeRule& rule, int* visited,
                  cudaStream_t stream) {
  const auto blocks = static_cast<unsigned>((n + kBlock - 1) / kBlock);
  expand_level_kernel<<<blocks, kBlock, 0, stream>>>(active, n, next, rule, visited);
  CUDALAB_CHECK_LAUNCH();
}

// Throws std::length_error when `need` nodes do not fit in the visited buffer.
void require_room(std::size_t need, std::size_t capacity) {
  if (need > capacity)
    throw std::length_error("expand_until_empty: the tree has more than visited_capacity = " +
                            std::to_string(capacity) + " nodes (at least " + std::to_string(need) + ")");
}

}  // namespace

std::vector<std::size_t> expand_until_empty(const int* roots, std::size_t n_roots, TreeRule rule, int* visited,
                                            std::size_t visited_capacity, cudaStream_t stream) {
  require_pointer("expand_until_empty", "roots", roots, n_roots);
  require_pointer("expand_until_empty", "visited", visited, visited_capacity);
  require_count_at_most("expand_until_empty", n_roots, max_items);
  detail::check_rule("expand_until_empty", rule);
  require_room(n_roots, visited_capacity);
  std::vector<std::size_t> offsets{0};
  if (n_roots == 0) return offsets;

  // Two work lists: the one being read (`active`; the roots themselves for
  // level 0) and the one being filled (`next`). No level can be larger than
  // the whole tree, so visited_capacity slots each suffice; a next list that
  // overflows means the tree does not fit in `visited` either.
  Stack<int> lists[2] = {Stack<int>(visited_capacity), Stack<int>(visited_capacity)};
  // BEGIN SOLUTION
  const int* active = roots;
  std::size_t n = n_roots;
  int fill = 1;  // the list that receives the next level
  for (unsigned level = 0; n > 0; ++level) {
    if (level > rule.max_depth)  // bound the loop: every level is one deeper than the last
      throw std::logic_error("expand_until_empty: level " + std::to_string(level) +
                             " is non-empty, deeper than max_depth; children were pushed that do not exist");
    require_room(offsets.back() + n, visited_capacity);
    Stack<int>& next = lists[fill];
    next.clear(stream);
    launch_level(active, n, next.view(), rule, visited + offsets.back(), stream);
    offsets.push_back(offsets.back() + n);
    // One synchronization per level: the host needs the count to size the
    // next launch. A push-only counter above the capacity means an overflow,
    // and then the tree does not fit in `visited`.
    const auto pushed = static_cast<std::size_t>(next.counter(stream));
    require_room(offsets.back() + pushed, visited_capacity);
    n = pushed;
    active = next.data();  // swap: the list just filled is read by the next level
    fill = 1 - fill;
  }
  // STARTER:
  // // TODO(3.4): loop over the levels until the next list is empty: clear
  // // the next list, launch the level, append an offset, read the next
  // // list's counter (synchronizes), then swap the two lists. Bound the loop
  // // (at most rule.max_depth + 1 levels) and check visited_capacity.
  // // As given, only level 0 (the roots) is expanded.
  // launch_level(roots, n_roots, lists[1].view(), rule, visited, stream);
  // CUDALAB_CHECK(cudaStreamSynchronize(stream));
  // offsets.push_back(n_roots);
  // END SOLUTION
  return offsets;
}

}  // namespace cudalab::stack
