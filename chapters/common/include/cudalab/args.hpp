/// @file args.hpp
/// @brief Argument checks shared by every public launcher: they run before any
///        CUDA call, so bad input changes nothing and needs no GPU to detect.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace cudalab {

/// @brief Throws std::invalid_argument naming `function` and `what` when
///        `ptr` is null although `count` elements are to be accessed.
/// @param function the public function being called, for the message
/// @param what     the parameter's name, for the message
/// @param ptr      the pointer to check (may be null when count is 0)
/// @param count    how many elements the call will access
inline void require_pointer(const char* function, const char* what, const void* ptr,
                            std::size_t count) {
  if (ptr == nullptr && count > 0) {
    throw std::invalid_argument(std::string(function) + ": " + what + " is null but " +
                                std::to_string(count) + " element(s) are to be accessed");
  }
}

/// @brief Throws std::invalid_argument naming `function` when `n` exceeds `max_n`.
/// @param function the public function being called, for the message
/// @param n        the requested element count
/// @param max_n    the largest count the function supports
inline void require_count_at_most(const char* function, std::size_t n, std::size_t max_n) {
  if (n > max_n) {
    throw std::invalid_argument(std::string(function) + ": n = " + std::to_string(n) +
                                " exceeds the supported maximum " + std::to_string(max_n));
  }
}

/// @brief Throws std::invalid_argument naming `function` and `what` unless
///        `value` is a power of two in [lo, hi] (a tile or segment size).
/// @param function the public function being called, for the message
/// @param what     the parameter's name, for the message
/// @param value    the size to check
/// @param lo       the smallest size allowed, a power of two (≥ 1)
/// @param hi       the largest size allowed, a power of two
inline void require_power_of_two_in(const char* function, const char* what, std::size_t value, std::size_t lo,
                                    std::size_t hi) {
  if (value < lo || value > hi || (value & (value - 1)) != 0) {
    throw std::invalid_argument(std::string(function) + ": " + what + " = " + std::to_string(value) +
                                " is not a power of two in [" + std::to_string(lo) + ", " +
                                std::to_string(hi) + "]");
  }
}

}  // namespace cudalab
