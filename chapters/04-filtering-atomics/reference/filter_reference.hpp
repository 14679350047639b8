/// @file filter_reference.hpp
/// @brief CPU references for chapter 4: the stable filter (`std::copy_if`)
///        and the live pairs of a hash table (exercise 4.7).
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "cudalab/filter.cuh"

/// @brief CPU reference implementations (the ground truth of the tests).
namespace cudalab::reference {

/// @brief The elements of `in` with `pred` true, in input order (what every
///        filter selects; exactly the output of exercise 4.6). Work O(n).
template <class T, class Pred>
std::vector<T> copy_if(const std::vector<T>& in, Pred pred) {
  std::vector<T> out;
  out.reserve(in.size());
  for (const T& x : in)
    if (pred(x)) out.push_back(x);
  return out;
}

/// @brief The (key, value) pairs of the live slots (cudalab::filter::is_live)
///        of every sub-table, sub-table by sub-table, slot by slot.
///        Work O(total slots).
inline std::vector<std::pair<long long, long long>> live_pairs(
    const std::vector<std::vector<cudalab::filter::Slot>>& tables) {
  std::vector<std::pair<long long, long long>> out;
  for (const auto& table : tables)
    for (const auto& slot : table)
      if (cudalab::filter::is_live(slot.key)) out.emplace_back(slot.key, slot.value);
  return out;
}

}  // namespace cudalab::reference
