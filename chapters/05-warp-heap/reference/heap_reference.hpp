/// @file heap_reference.hpp
/// @brief CPU references for chapter 5: replace_smallest on one node, the
///        smallest child of a node, and the script of a warp heap run on a
///        `std::priority_queue` with the same capacity, order and flags.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <queue>
#include <utility>
#include <vector>

#include "cudalab/heap.cuh"

/// @brief CPU reference implementations (the ground truth of the tests).
namespace cudalab::reference {

using heap::Entry;

/// @brief replace_smallest on one node: `node` (32 entries, sorted) receives
///        x; the smallest of the 33 is removed and returned, the rest stays
///        sorted in `node`. Work O(32).
inline Entry replace_smallest_one(std::vector<Entry>& node, Entry x) {
  std::vector<Entry> all(node);
  all.push_back(x);
  std::stable_sort(all.begin(), all.end());
  const Entry evicted = all.front();
  std::copy(all.begin() + 1, all.end(), node.begin());
  return evicted;
}

/// @brief The child of `parent` with the smallest top by entry_less (the
///        smallest index among equal tops), or −1 when it has none, in a heap
///        of tops.size() nodes. Work O(32).
inline int min_child_one(const std::vector<Entry>& tops, long long parent) {
  const auto count = static_cast<long long>(tops.size());
  if (parent < 0 || parent >= count) return -1;
  int best = -1;
  for (long long c = parent * heap::node_size + 1; c <= parent * heap::node_size + heap::node_size && c < count;
       ++c)
    if (best < 0 || tops[static_cast<std::size_t>(c)] < tops[static_cast<std::size_t>(best)])
      best = static_cast<int>(c);
  return best;
}

/// @brief Runs one script on a priority queue of `capacity_entries` entries
///        with the semantics of cudalab::heap::warp_heap and returns its
///        steps. Work O(ops · log(size)).
inline std::vector<heap::HeapStep> run_heap_script(const std::vector<heap::HeapOp>& ops,
                                                   std::size_t capacity_entries) {
  // std::priority_queue is a max-heap of its comparator: "greater" makes it a min-heap.
  auto greater = [](const Entry& a, const Entry& b) { return b < a; };
  std::priority_queue<Entry, std::vector<Entry>, decltype(greater)> pq(greater);
  std::vector<heap::HeapStep> steps;
  steps.reserve(ops.size());
  for (const heap::HeapOp& op : ops) {
    heap::HeapStep s{heap::kEmptyKey, heap::kEmptyValue, heap::kEmptyKey, heap::kEmptyValue, 0, 0u};
    if (op.kind == heap::OpKind::push) {
      if (std::isnan(op.key) || op.key == heap::kEmptyKey) {
        s.flags = heap::kInvalidKey;
      } else if (pq.size() >= capacity_entries) {
        s.flags = heap::kOverflow;
      } else {
        pq.push({op.key, op.value});
      }
    } else {
      if (pq.empty()) {
        s.flags = heap::kUnderflow;
      } else {
        s.key = pq.top().key;
        s.value = pq.top().value;
        pq.pop();
      }
    }
    if (!pq.empty()) {
      s.top_key = pq.top().key;
      s.top_value = pq.top().value;
    }
    s.size = static_cast<int>(pq.size());
    steps.push_back(s);
  }
  return steps;
}

}  // namespace cudalab::reference
