/// @file generators.hpp
/// @brief Seeded, reproducible input generators (host side).
///
/// Element i of every generated array depends only on (seed, i) through the
/// SplitMix64 mixing function (Steele, Lea and Flood, "Fast splittable
/// pseudorandom number generators", OOPSLA 2014), so a failing case is
/// reproduced from its seed and size alone, on any machine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace cudalab::gen {

/// @brief SplitMix64: a bijective 64-bit mix; `mix(seed + i * golden)` is
///        the i-th output of a SplitMix64 stream started at `seed`.
constexpr std::uint64_t splitmix64(std::uint64_t x) noexcept {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// @brief The 64 random bits of element `i` of the stream `seed`.
constexpr std::uint64_t bits(std::uint64_t seed, std::uint64_t i) noexcept {
  return splitmix64(seed ^ splitmix64(i));
}

/// @brief n integers uniform in the closed range [lo, hi].
/// @tparam T an integer type of at most 64 bits
/// @throws std::invalid_argument when lo > hi.
/// Work O(n).
template <class T>
std::vector<T> uniform_int(std::size_t n, std::uint64_t seed, T lo, T hi) {
  static_assert(std::is_integral_v<T>, "uniform_int needs an integer type");
  if (lo > hi) throw std::invalid_argument("uniform_int: lo > hi");
  std::vector<T> out(n);
  using U = std::make_unsigned_t<T>;
  const std::uint64_t span = static_cast<std::uint64_t>(static_cast<U>(hi) - static_cast<U>(lo));
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t r = bits(seed, i);
    // Multiply-shift maps 64 random bits to [0, span] with negligible bias.
    const std::uint64_t off =
        span == ~0ull ? r
                      : static_cast<std::uint64_t>((static_cast<unsigned __int128>(r) * (span + 1)) >> 64);
    out[i] = static_cast<T>(static_cast<U>(static_cast<U>(lo) + static_cast<U>(off)));
  }
  return out;
}

/// @brief n floating-point numbers uniform in [lo, hi).
/// @tparam T float or double
/// Work O(n).
template <class T>
std::vector<T> uniform_real(std::size_t n, std::uint64_t seed, T lo, T hi) {
  static_assert(std::is_floating_point_v<T>, "uniform_real needs a floating-point type");
  std::vector<T> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double u = static_cast<double>(bits(seed, i) >> 11) * 0x1.0p-53;  // [0, 1)
    out[i] = static_cast<T>(lo + (hi - lo) * u);
    if (!(out[i] < hi)) out[i] = lo;  // rounding of the product may reach hi
  }
  return out;
}

/// @brief n copies of `value` (the "all equal" adversarial input).
template <class T>
std::vector<T> constant(std::size_t n, T value) {
  return std::vector<T>(n, value);
}

}  // namespace cudalab::gen
