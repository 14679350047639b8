/// @file compare.hpp
/// @brief Comparison helpers that locate and describe the first mismatch.
#pragma once

#include <algorithm>
#include <cstddef>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace cudalab {

/// @brief The index of the first element where `expected` and `actual`
///        differ, or std::nullopt when they are equal (a size difference
///        counts as a mismatch at the shorter length).
/// Work O(n).
template <class T>
std::optional<std::size_t> first_mismatch(const std::vector<T>& expected,
                                          const std::vector<T>& actual) {
  const std::size_t n = std::min(expected.size(), actual.size());
  for (std::size_t i = 0; i < n; ++i)
    if (!(expected[i] == actual[i])) return i;
  if (expected.size() != actual.size()) return n;
  return std::nullopt;
}

/// @brief "index i: expected X, actual Y" for the first mismatch, or an
///        empty string when the arrays are equal.
template <class T>
std::string describe_first_mismatch(const std::vector<T>& expected, const std::vector<T>& actual) {
  const auto at = first_mismatch(expected, actual);
  if (!at) return {};
  std::ostringstream out;
  out << "first mismatch at index " << *at << ": expected ";
  if (*at < expected.size()) out << +expected[*at]; else out << "(end)";
  out << ", actual ";
  if (*at < actual.size()) out << +actual[*at]; else out << "(end)";
  return out.str();
}

/// @brief True when `a` and `b` hold the same elements with the same
///        multiplicities, in any order (for outputs written through atomics).
/// Work O(n log n).
template <class T>
bool same_multiset(std::vector<T> a, std::vector<T> b) {
  if (a.size() != b.size()) return false;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b;
}

}  // namespace cudalab
