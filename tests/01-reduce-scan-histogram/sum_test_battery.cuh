// The test battery shared by exercises 1.1 to 1.4: every sum has the same
// contract (cudalab/reduce.cuh), so each exercise's test file instantiates
// this battery with its own suite name, exercise id and function.
#pragma once

#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "cudalab/device_buffer.cuh"
#include "cudalab/generators.hpp"
#include "cudalab/reduce.cuh"
#include "cudalab/test/harness.hpp"
#include "reduce_reference.hpp"

namespace cudalab::test::sum {

using IntSum = void (*)(const int*, std::size_t, long long*, cudaStream_t);
using FloatSum = void (*)(const float*, std::size_t, float*, cudaStream_t);

constexpr unsigned char kPoison = 0xA5;  // unwritten output reads 0xA5A5A5A5...

/// The edge sizes of docs/guides/contributing.md ("Tests"), the tile boundaries of 1.2 to 1.4 (256,
/// 512, 4096 elements), a prime, 2^20 + 7 and one large size.
inline const std::vector<std::size_t> kIntSizes = {
    0, 1, 2, 3, 4, 5, 31, 32, 33, 255, 256, 257, 511, 512, 513, 1023, 1024, 1025,
    4095, 4096, 4097, 65537, 1000003, (1u << 20) + 7, (1u << 26) + 1};

/// Float sizes stop at 2^20 + 7: up to there a sum of integers in [-8, 8] never
/// leaves the range where float represents every integer (2^24), so it is
/// exact in every order.
inline const std::vector<std::size_t> kFloatSizes = {
    0, 1, 2, 3, 31, 32, 33, 255, 256, 257, 511, 512, 513, 1023, 1024, 1025,
    4095, 4096, 4097, 65537, (1u << 20) + 7};

inline std::string size_name(const ::testing::TestParamInfo<std::size_t>& info) {
  return "n" + std::to_string(info.param);
}

/// Runs `fn` on `host` copied to the device at `offset` elements past an
/// aligned allocation, with the output poisoned first; returns the result.
template <class T, class Acc>
Acc run_sum(void (*fn)(const T*, std::size_t, Acc*, cudaStream_t), const std::vector<T>& host,
            std::size_t offset = 0) {
  DeviceBuffer<T> in(host.size() + offset);
  if (!host.empty())
    CUDALAB_CHECK(cudaMemcpy(in.data() + offset, host.data(), host.size() * sizeof(T),
                             cudaMemcpyHostToDevice));
  DeviceBuffer<Acc> out(1);
  out.fill_bytes(kPoison);
  fn(host.empty() ? nullptr : in.data() + offset, host.size(), out.data(), nullptr);
  CUDALAB_CHECK(cudaDeviceSynchronize());
  return out.download()[0];
}

/// int32 values over the whole range: the sum must equal the exact 64-bit sum.
inline void int32_random(const char* exercise, IntSum fn, std::size_t n) {
  CUDALAB_SKIP_IF_ABOVE_MAX_N(n);
  const auto s = seed();
  const auto in = gen::uniform_int<int>(n, s, INT_MIN, INT_MAX);
  const long long expected = reference::sum(in);
  const long long actual = run_sum(fn, in);
  ASSERT_EQ(expected, actual) << context(exercise, n, s)
                              << "int32 values uniform over [INT_MIN, INT_MAX]; the sum is "
                                 "exact in 64 bits. Unwritten output reads as "
                              << static_cast<long long>(0xA5A5A5A5A5A5A5A5ull) << ".";
}

/// All elements INT_MAX, then all INT_MIN: an int32 accumulator overflows.
inline void int32_extremes(const char* exercise, IntSum fn) {
  const std::size_t n = (1u << 20) + 7;
  for (const int value : {INT_MAX, INT_MIN}) {
    const std::vector<int> in(n, value);
    const long long expected = static_cast<long long>(value) * static_cast<long long>(n);
    const long long actual = run_sum(fn, in);
    const long long unwritten = static_cast<long long>(0xA5A5A5A5A5A5A5A5ull);
    ASSERT_EQ(expected, actual)
        << context(exercise, n, 0) << "every element is " << value << ". "
        << (actual == unwritten ? "Nothing was written to *out (it still holds the poison value)."
            : actual == 0       ? "*out is 0: the kernel added nothing."
            : actual == static_cast<long long>(static_cast<int>(expected))
                ? "The sum wrapped around at 32 bits: accumulate in long long, never in int."
                : "The sum is wrong. If only the Int32Extremes tests fail, a partial sum "
                  "overflows: accumulate in long long, never in int. If other tests fail too, "
                  "fix those first (a race, such as a missing __syncthreads(), or a lost "
                  "element shows here as well).");
  }
}

/// The input starts 1, 2 and 3 elements past a 16-byte boundary.
inline void int32_misaligned(const char* exercise, IntSum fn) {
  const auto s = seed();
  for (const std::size_t n : {std::size_t{1}, std::size_t{3}, std::size_t{5}, std::size_t{1000},
                              std::size_t{(1u << 20) + 5}}) {
    const auto in = gen::uniform_int<int>(n, s, -1000000, 1000000);
    for (const std::size_t offset : {1, 2, 3}) {
      ASSERT_EQ(reference::sum(in), run_sum(fn, in, offset))
          << context(exercise, n, s) << "input pointer is " << offset
          << " element(s) past a 16-byte boundary";
    }
  }
}

/// Integers in [-8, 8] stored as float: exact in any order for these sizes.
inline void float_small_integers_exact(const char* exercise, FloatSum fn, std::size_t n) {
  CUDALAB_SKIP_IF_ABOVE_MAX_N(n);
  const auto s = seed();
  const auto ints = gen::uniform_int<int>(n, s, -8, 8);
  const std::vector<float> in(ints.begin(), ints.end());
  const auto expected = static_cast<float>(reference::sum(ints));
  ASSERT_EQ(expected, run_sum(fn, in))
      << context(exercise, n, s)
      << "float inputs are small integers, so every partial sum is exact: a difference means "
         "an element was lost or added twice.";
}

/// Uniform [0, 1) floats: within Higham's bound for summation in any order,
/// |computed - exact| <= gamma(n-1) * sum|x|, gamma(k) = k u / (1 - k u), u = 2^-24.
inline void float_within_rounding_bound(const char* exercise, FloatSum fn, std::size_t n) {
  CUDALAB_SKIP_IF_ABOVE_MAX_N(n);
  const auto s = seed();
  const auto in = gen::uniform_real<float>(n, s, 0.0f, 1.0f);
  const double exact = reference::sum_exact(in);
  const double abs_sum = reference::sum_abs(in);
  const double ku = static_cast<double>(n > 0 ? n - 1 : 0) * 0x1.0p-24;
  const double bound = ku / (1.0 - ku) * abs_sum;
  const float actual = run_sum(fn, in);
  ASSERT_TRUE(std::isfinite(actual)) << context(exercise, n, s) << "result is " << actual;
  ASSERT_LE(std::fabs(static_cast<double>(actual) - exact), bound)
      << context(exercise, n, s) << "exact sum " << exact << ", computed " << actual
      << ", tolerance (n-1)u/(1-(n-1)u) * sum|x| = " << bound;
}

/// Bad arguments throw std::invalid_argument before any CUDA call: no GPU needed.
template <class T, class Acc>
void bad_input_throws(void (*fn)(const T*, std::size_t, Acc*, cudaStream_t)) {
  const T* some_in = reinterpret_cast<const T*>(alignof(T) * 64);  // never dereferenced
  Acc* some_out = reinterpret_cast<Acc*>(alignof(Acc) * 64);
  EXPECT_THROW(fn(some_in, 10, nullptr, nullptr), std::invalid_argument) << "null out";
  EXPECT_THROW(fn(nullptr, 10, some_out, nullptr), std::invalid_argument) << "null in, n > 0";
  EXPECT_THROW(fn(some_in, cudalab::reduce::max_elements + 1, some_out, nullptr),
               std::invalid_argument)
      << "n above max_elements";
}

/// On the GPU: a rejected call leaves the output as it was.
inline void bad_input_changes_nothing(const char* exercise, IntSum fn) {
  DeviceBuffer<int> in(4);
  DeviceBuffer<long long> out(1);
  out.fill_bytes(kPoison);
  EXPECT_THROW(fn(nullptr, 4, out.data(), nullptr), std::invalid_argument);
  EXPECT_THROW(fn(in.data(), cudalab::reduce::max_elements + 1, out.data(), nullptr),
               std::invalid_argument);
  CUDALAB_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(static_cast<long long>(0xA5A5A5A5A5A5A5A5ull), out.download()[0])
      << "[" << exercise << "] a call that threw wrote to the output";
}

}  // namespace cudalab::test::sum

/// Defines the suites Suite (int32, by size), Suite##Float (float, by size),
/// Suite##Cases (fixed cases on the GPU) and Suite##BadInput (host only) for
/// the sum `function` of exercise `exercise` (e.g. "1.1 sum_atomic").
#define CUDALAB_SUM_TEST_SUITES(Suite, exercise, function)                                     \
  namespace {                                                                                   \
  constexpr auto Suite##Int = static_cast<::cudalab::test::sum::IntSum>(&function);              \
  constexpr auto Suite##Flt = static_cast<::cudalab::test::sum::FloatSum>(&function);            \
  class Suite : public ::cudalab::test::GpuTestWithParam<std::size_t> {};                       \
  TEST_P(Suite, Int32Random) { ::cudalab::test::sum::int32_random(exercise, Suite##Int, GetParam()); } \
  INSTANTIATE_TEST_SUITE_P(Sizes, Suite, ::testing::ValuesIn(::cudalab::test::sum::kIntSizes),   \
                           ::cudalab::test::sum::size_name);                                    \
  class Suite##Float : public ::cudalab::test::GpuTestWithParam<std::size_t> {};                \
  TEST_P(Suite##Float, SmallIntegersExact) {                                                    \
    ::cudalab::test::sum::float_small_integers_exact(exercise, Suite##Flt, GetParam());         \
  }                                                                                             \
  TEST_P(Suite##Float, WithinRoundingBound) {                                                   \
    ::cudalab::test::sum::float_within_rounding_bound(exercise, Suite##Flt, GetParam());        \
  }                                                                                             \
  INSTANTIATE_TEST_SUITE_P(Sizes, Suite##Float,                                                 \
                           ::testing::ValuesIn(::cudalab::test::sum::kFloatSizes),              \
                           ::cudalab::test::sum::size_name);                                    \
  class Suite##Cases : public ::cudalab::test::GpuTest {};                                      \
  TEST_F(Suite##Cases, Int32Extremes) { ::cudalab::test::sum::int32_extremes(exercise, Suite##Int); } \
  TEST_F(Suite##Cases, Int32Misaligned) { ::cudalab::test::sum::int32_misaligned(exercise, Suite##Int); } \
  TEST_F(Suite##Cases, BadInputChangesNothing) {                                                \
    ::cudalab::test::sum::bad_input_changes_nothing(exercise, Suite##Int);                      \
  }                                                                                             \
  TEST(Suite##BadInput, Int32Throws) { ::cudalab::test::sum::bad_input_throws(Suite##Int); }     \
  TEST(Suite##BadInput, FloatThrows) { ::cudalab::test::sum::bad_input_throws(Suite##Flt); }     \
  }  // namespace
