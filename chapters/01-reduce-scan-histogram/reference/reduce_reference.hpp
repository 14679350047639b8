/// @file reduce_reference.hpp
/// @brief CPU reference sums that the tests and benchmarks of exercises 1.1
///        to 1.4 compare against.
#pragma once

#include <cmath>
#include <vector>

/// @brief CPU reference implementations (the ground truth of the tests).
namespace cudalab::reference {

/// @brief The exact sum of int32 values, in 64 bits.
/// Work O(n), one pass. Exact for n ≤ 2^32 (|sum| < 2^63).
inline long long sum(const std::vector<int>& in) {
  long long s = 0;
  for (const int x : in) s += x;
  return s;
}

/// @brief The sum of float values in double with Neumaier's compensated
///        summation: within about 2^-53 · Σ|x| of the exact sum, far below
///        float's rounding, so it serves as "exact" for float tests.
/// Work O(n). Source: A. Neumaier, "Rundungsfehleranalyse einiger Verfahren
/// zur Summation endlicher Summen", ZAMM 54 (1974).
inline double sum_exact(const std::vector<float>& in) {
  double s = 0.0;
  double c = 0.0;  // running compensation
  for (const float xf : in) {
    const double x = xf;
    const double t = s + x;
    c += std::fabs(s) >= std::fabs(x) ? (s - t) + x : (x - t) + s;
    s = t;
  }
  return s + c;
}

/// @brief Σ|x| in double: the scale of the rounding-error bound of a float sum.
/// Work O(n).
inline double sum_abs(const std::vector<float>& in) {
  double s = 0.0;
  for (const float x : in) s += std::fabs(static_cast<double>(x));
  return s;
}

}  // namespace cudalab::reference
