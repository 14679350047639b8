/// @file sort_reference.hpp
/// @brief CPU references that the tests and benchmarks of chapter 2 compare
///        against: the standard library's sorts and merges, applied per
///        segment or per pair of runs, and a host merge-path search.
#pragma once

#include <algorithm>
#include <cstddef>
#include <utility>
#include <vector>

namespace cudalab::reference {

/// @brief Sorts each segment of `segment` consecutive keys on its own (the
///        last may be shorter); `segment` = 0 or ≥ n sorts the whole array.
/// Work O(n log segment).
inline std::vector<int> sort_segments(std::vector<int> keys, std::size_t segment) {
  const std::size_t n = keys.size();
  if (segment == 0 || segment > n) segment = n;
  for (std::size_t s = 0; s < n; s += segment) {
    const std::size_t e = std::min(n, s + segment);
    std::sort(keys.begin() + static_cast<std::ptrdiff_t>(s), keys.begin() + static_cast<std::ptrdiff_t>(e));
  }
  return keys;
}

/// @brief Key-value pairs, each a key and the value that moves with it.
struct Pairs {
  std::vector<int> keys;    ///< the keys
  std::vector<int> values;  ///< values[i] belongs to keys[i]
};

namespace detail {
/// @brief The pairs as one array of (key, value), for the standard
///        library's algorithms. Work O(n).
inline std::vector<std::pair<int, int>> zip(const Pairs& in) {
  std::vector<std::pair<int, int>> kv(in.keys.size());
  for (std::size_t i = 0; i < kv.size(); ++i) kv[i] = {in.keys[i], in.values[i]};
  return kv;
}

/// @brief The inverse of zip. Work O(n).
inline Pairs unzip(const std::vector<std::pair<int, int>>& kv) {
  Pairs out{std::vector<int>(kv.size()), std::vector<int>(kv.size())};
  for (std::size_t i = 0; i < kv.size(); ++i) {
    out.keys[i] = kv[i].first;
    out.values[i] = kv[i].second;
  }
  return out;
}

/// @brief Orders two (key, value) entries by key alone, so that the
///        standard library's stable algorithms keep the values' order on ties.
inline bool key_less(const std::pair<int, int>& a, const std::pair<int, int>& b) { return a.first < b.first; }
}  // namespace detail

/// @brief A stable sort by key of each segment of `segment` pairs
///        (`segment` = 0: the whole array), by std::stable_sort.
/// Work O(n log segment).
inline Pairs stable_sort_pairs(const Pairs& in, std::size_t segment = 0) {
  const std::size_t n = in.keys.size();
  if (segment == 0 || segment > n) segment = n;
  std::vector<std::pair<int, int>> kv = detail::zip(in);
  for (std::size_t s = 0; s < n; s += segment) {
    const std::size_t e = std::min(n, s + segment);
    std::stable_sort(kv.begin() + static_cast<std::ptrdiff_t>(s), kv.begin() + static_cast<std::ptrdiff_t>(e),
                     detail::key_less);
  }
  return detail::unzip(kv);
}

/// @brief One pass of bottom-up merge sort: merges runs 2p and 2p + 1 of
///        `run` keys (the last run may be shorter) into run p of 2 · run
///        keys, stably (std::merge takes the first run's key on ties).
/// @pre each run of `in` is sorted; run ≥ 1.
/// Work O(n).
inline Pairs merge_runs(const Pairs& in, std::size_t run) {
  const std::size_t n = in.keys.size();
  const std::vector<std::pair<int, int>> kv = detail::zip(in);
  std::vector<std::pair<int, int>> merged(n);
  for (std::size_t p = 0; p < n; p += 2 * run) {
    const std::size_t mid = std::min(n, p + run);
    const std::size_t end = std::min(n, mid + run);
    const auto at = [&](std::size_t i) { return kv.begin() + static_cast<std::ptrdiff_t>(i); };
    std::merge(at(p), at(mid), at(mid), at(end), merged.begin() + static_cast<std::ptrdiff_t>(p),
               detail::key_less);
  }
  return detail::unzip(merged);
}

/// @brief The keys-only merge pass (see merge_runs(const Pairs&, std::size_t)).
inline std::vector<int> merge_runs(const std::vector<int>& keys, std::size_t run) {
  return merge_runs(Pairs{keys, std::vector<int>(keys.size(), 0)}, run).keys;
}

/// @brief The merge-path split of a stable merge of sorted `a` and `b`
///        (first list first on ties): the number of keys of `a` among the
///        first `diag` keys of the merged output, for 0 ≤ diag ≤ |a| + |b|.
///
/// A binary search along the cross diagonal `diag` of the |a| × |b| grid:
/// it returns the smallest i in [max(0, diag − |b|), min(diag, |a|)] with
/// `b[diag − 1 − i] < a[i]` (or the upper end when there is none).
/// Work O(log min(|a|, |b|)).
/// Source: Green, McColl and Bader, ICS 2012; Baxter, moderngpu `merge_path`.
inline std::size_t merge_path(const std::vector<int>& a, const std::vector<int>& b, std::size_t diag) {
  std::size_t begin = diag > b.size() ? diag - b.size() : 0;
  std::size_t end = std::min(diag, a.size());
  while (begin < end) {
    const std::size_t mid = begin + (end - begin) / 2;
    if (!(b[diag - 1 - mid] < a[mid])) begin = mid + 1;
    else end = mid;
  }
  return begin;
}

/// @brief The index of the first i with keys[i + 1] < keys[i] inside one
///        segment of `segment` keys (0: the whole array), or keys.size()
///        when every segment is sorted.
/// Work O(n).
inline std::size_t first_unsorted(const std::vector<int>& keys, std::size_t segment = 0) {
  for (std::size_t i = 0; i + 1 < keys.size(); ++i) {
    if (segment != 0 && (i + 1) % segment == 0) continue;  // i and i + 1 in different segments
    if (keys[i + 1] < keys[i]) return i;
  }
  return keys.size();
}

}  // namespace cudalab::reference
