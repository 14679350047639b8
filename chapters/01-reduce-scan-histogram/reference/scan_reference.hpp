/// @file scan_reference.hpp
/// @brief CPU reference scans that the tests and benchmarks of exercises 1.5
///        to 1.9 compare against: serial loops, sums modulo 2^32 as in
///        cudalab/scan.cuh.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace cudalab::reference {

/// @brief a + b modulo 2^32 (two's-complement wrap-around, computed in
///        unsigned so it is defined behaviour).
inline int add_wrap(int a, int b) {
  return static_cast<int>(static_cast<std::uint32_t>(a) + static_cast<std::uint32_t>(b));
}

namespace detail {
/// @brief The serial scan under `op` that starts again from `identity` at
///        every i with `starts(i)` true: inclusive (`out[i]` includes `in[i]`)
///        or exclusive (`out[i]` is op over the elements before i since the
///        last start). Work O(n).
template <class Op, class Starts>
std::vector<int> restarting_scan(const std::vector<int>& in, Op op, int identity, bool inclusive,
                                 Starts starts) {
  std::vector<int> out(in.size());
  int running = identity;
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (starts(i)) running = identity;
    if (inclusive) {
      running = op(running, in[i]);
      out[i] = running;
    } else {
      out[i] = running;
      running = op(running, in[i]);
    }
  }
  return out;
}
}  // namespace detail

/// @brief Inclusive (or, with `inclusive` false, exclusive) prefix sums of
///        each tile of `tile` consecutive elements, restarting at every tile;
///        `tile` = 0 scans the whole array as one tile.
/// Work O(n), one pass: the serial scan.
inline std::vector<int> scan_tiles(const std::vector<int>& in, std::size_t tile, bool inclusive) {
  return detail::restarting_scan(in, add_wrap, 0, inclusive,
                                 [tile](std::size_t i) { return tile != 0 && i % tile == 0; });
}

/// @brief The exclusive prefix sums of the whole array (modulo 2^32).
/// Work O(n).
inline std::vector<int> exclusive_scan(const std::vector<int>& in) { return scan_tiles(in, 0, false); }

/// @brief The inclusive prefix sums of the whole array (modulo 2^32).
/// Work O(n).
inline std::vector<int> inclusive_scan(const std::vector<int>& in) { return scan_tiles(in, 0, true); }

/// @brief Segmented scan under `op` (with `Op::identity`): a segment starts
///        at every i with flags[i] != 0 and always at i = 0. Inclusive:
///        out[i] = op over the segment's elements up to i; exclusive: the
///        identity at a head, else op over the segment's elements before i.
/// Work O(n). `Op` is cudalab::scan::Plus, Minimum or Maximum (or any type
/// with a call operator on int and a static `identity`).
template <class Op>
std::vector<int> segmented_scan(const std::vector<int>& in, const std::vector<std::uint8_t>& flags,
                                Op op, bool inclusive) {
  return detail::restarting_scan(in, op, Op::identity, inclusive,
                                 [&flags](std::size_t i) { return i == 0 || flags[i] != 0; });
}

}  // namespace cudalab::reference
