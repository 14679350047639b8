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

/// @brief Inclusive (or, with `inclusive` false, exclusive) prefix sums of
///        each tile of `tile` consecutive elements, restarting at every tile;
///        `tile` = 0 scans the whole array as one tile.
/// Work O(n), one pass: the serial scan.
inline std::vector<int> scan_tiles(const std::vector<int>& in, std::size_t tile, bool inclusive) {
  std::vector<int> out(in.size());
  int running = 0;
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (tile != 0 && i % tile == 0) running = 0;
    if (inclusive) {
      running = add_wrap(running, in[i]);
      out[i] = running;
    } else {
      out[i] = running;
      running = add_wrap(running, in[i]);
    }
  }
  return out;
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
  std::vector<int> out(in.size());
  int running = Op::identity;
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (i == 0 || flags[i] != 0) running = Op::identity;
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

}  // namespace cudalab::reference
