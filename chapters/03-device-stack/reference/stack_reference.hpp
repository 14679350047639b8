/// @file stack_reference.hpp
/// @brief CPU references for chapter 3: the level-by-level expansion of
///        exercise 3.4 and the expected contents of a stack after pushes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "cudalab/stack.cuh"

/// @brief CPU reference implementations (the ground truth of the tests).
namespace cudalab::reference {

/// @brief The items that pushes (or enqueues) with these flags store:
///        items[i] for every i with flags[i] != 0 (every i when `flags` is
///        empty), in index order. Work O(n).
inline std::vector<int> pushed_items(const std::vector<int>& items, const std::vector<std::uint8_t>& flags) {
  std::vector<int> out;
  out.reserve(items.size());
  for (std::size_t i = 0; i < items.size(); ++i)
    if (flags.empty() || flags[i] != 0) out.push_back(items[i]);
  return out;
}

/// @brief The levels of the tree of `rule` grown from `roots`, breadth
///        first: level 0 is the roots, level l + 1 the existing children of
///        level l's nodes (child 2v before 2v + 1, parents in level order).
///        Work O(nodes).
inline std::vector<std::vector<int>> expand_levels(const std::vector<int>& roots, const stack::TreeRule& rule) {
  std::vector<std::vector<int>> levels;
  std::vector<int> active = roots;
  while (!active.empty()) {
    std::vector<int> next;
    for (const int v : active)
      for (unsigned which = 0; which < 2; ++which)
        if (stack::has_child(rule, v, which)) next.push_back(2 * v + static_cast<int>(which));
    levels.push_back(std::move(active));
    active = std::move(next);
  }
  return levels;
}

}  // namespace cudalab::reference
