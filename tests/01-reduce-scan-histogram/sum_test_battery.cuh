// The test battery shared by exercises 1.1 to 1.4: every sum has the same
// contract (cudalab/reduce.cuh), so each exercise's test file instantiates
// this battery with its own suite name, exercise id and function.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <exception>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "cudalab/device.cuh"
#include "cudalab/device_buffer.cuh"
#include "cudalab/error.cuh"
#include "cudalab/generators.hpp"
#include "cudalab/reduce.cuh"
#include "cudalab/test/device_memory.cuh"
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

// ---------------------------------------------------------------------------
// LargeIndex: inputs of more than 2^31 elements, which the contract allows
// (n is a std::size_t, up to max_elements = 2^32 - 1). An index kept in int
// becomes negative past 2^31 - 1; one kept in unsigned wraps past 2^32 - 1.
// Neither shows at the sizes above, so these tests fill 8 GiB (16 GiB for
// Int32MaxElements, 1.4 only) on the device with a kernel of their own and
// compare with a closed-form sum.

constexpr std::size_t k2To31 = std::size_t{1} << 31;
/// Int32Above2To31's n: 2^20 + 3 elements past 2^31 (over 2 000 blocks of
/// every exercise, and a 3-element tail after the last whole int4 of 1.4).
constexpr std::size_t kAbove2To31 = k2To31 + (std::size_t{1} << 20) + 3;
/// Added to every element from index 2^31 on: skipping those elements, or
/// reading others in their place, changes the sum by about 1000 each.
constexpr int kHighMark = 1000;

/// The LargeIndex input: in[i] = 1 + i % 7, plus kHighMark from index 2^31 on.
/// Every element is positive, so a lost element lowers the sum and an element
/// added twice raises it.
__host__ __device__ constexpr int large_index_value(std::size_t i) {
  return 1 + static_cast<int>(i % 7) + (i >= k2To31 ? kHighMark : 0);
}

/// Sum of 1 + i % 7 over i < m: 28 per whole period of 7, then 1 + 2 + ... + r.
/// Equals the sum of in[0..m) for m <= 2^31; lies in [4m - 6, 4m].
constexpr long long base_prefix(std::size_t m) {
  const auto r = static_cast<long long>(m % 7);
  return 28 * static_cast<long long>(m / 7) + r * (r + 1) / 2;
}

/// The exact sum of the LargeIndex input of n elements.
constexpr long long large_index_sum(std::size_t n) {
  const std::size_t high = n > k2To31 ? n - k2To31 : 0;
  return base_prefix(n) + static_cast<long long>(kHighMark) * static_cast<long long>(high);
}

static_assert(large_index_value(0) == 1 && large_index_value(6) == 7 && large_index_value(7) == 1);
static_assert(large_index_value(k2To31 - 1) == 1 + static_cast<int>((k2To31 - 1) % 7));
static_assert(large_index_value(k2To31) == 1 + 2 + kHighMark);  // 2^31 = 2 (mod 7)
static_assert(base_prefix(0) == 0 && base_prefix(3) == 6 && base_prefix(7) == 28 && base_prefix(10) == 34);
static_assert(large_index_sum(kAbove2To31) == 9642707903LL);
static_assert(large_index_sum(cudalab::reduce::max_elements) == 2164663516174LL);

/// Writes the LargeIndex pattern into in[0..n) (a grid-stride loop, 64-bit index).
__global__ void fill_large_index(int* in, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n; i += stride)
    in[i] = large_index_value(i);
}



/// What a wrong LargeIndex sum says about the index arithmetic.
inline std::string large_index_diagnosis(std::size_t n, long long expected, long long actual) {
  const long long unwritten = static_cast<long long>(0xA5A5A5A5A5A5A5A5ull);
  if (actual == unwritten) return "Nothing was written to *out (it still holds the poison value).";
  if (actual == 0) {
    return "*out is 0: nothing was added. Is n, or the index compared with it, kept in int "
           "(n = " + std::to_string(n) + " does not fit: it becomes negative)?";
  }
  if (actual == base_prefix(k2To31)) {
    return "That is exactly the sum of in[0] to in[2^31 - 1]: no element from index 2^31 on was "
           "added. An int index wraps past 2^31 - 1 to a negative number (and i < n is then "
           "false): use std::size_t for i, as in the lesson: "
           "blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x.";
  }
  if (actual < expected) {
    return "Elements were lost (every element is positive, and those from index 2^31 on are "
           "above " + std::to_string(kHighMark) + "): an index or offset computed in 32 bits "
           "(int wraps past 2^31 - 1, unsigned past 2^32 - 1) skips them or reads others in "
           "their place. Compute every index in std::size_t, as in the lesson (i, the thread's "
           "first index, the stride, the start of the tail).";
  }
  // Added twice: in[0..k) for some k when an unsigned index wrapped past 2^32 - 1 back to 0.
  const long long extra = actual - expected;
  const auto first = static_cast<std::size_t>(extra / 4);  // base_prefix(k) lies in [4k - 6, 4k]
  for (std::size_t k = first; k <= first + 2; ++k) {
    if (k > 0 && k <= std::min(n, k2To31) && base_prefix(k) == extra) {
      const std::string twice = k == 1 ? "in[0]: the first element was"
                                       : "in[0] to in[" + std::to_string(k - 1) + "]: the first " +
                                             std::to_string(k) + " elements were";
      return "That is exactly the expected sum plus " + twice + " added twice. An unsigned "
             "(32-bit) index wrapped past 2^32 - 1 back to 0: use std::size_t for every index, "
             "as in the lesson.";
    }
  }
  return "The sum is too large: some elements were added more than once. An index computed in "
         "32 bits wraps (int past 2^31 - 1, unsigned past 2^32 - 1) and lands on elements "
         "already added: use std::size_t for every index, as in the lesson.";
}

/// Sums n > 2^31 int elements of the LargeIndex pattern, filled on the device;
/// skips where the device (or its profile) lacks the memory, or under a
/// sanitizer's size cap.
inline void int32_large_index(const char* exercise, IntSum fn, std::size_t n) {
  CUDALAB_SKIP_IF_ABOVE_MAX_N(n);
  const std::size_t bytes = n * sizeof(int);
  std::optional<DeviceBuffer<int>> in;
  if (const std::string why =
          allocate_large(bytes, "n = " + std::to_string(n) + " int elements", [&] { in.emplace(n); });
      !why.empty())
    GTEST_SKIP() << why;
  fill_large_index<<<1024, 256>>>(in->data(), n);
  CUDALAB_CHECK_LAUNCH();
  DeviceBuffer<long long> out(1);
  out.fill_bytes(kPoison);
  CUDALAB_CHECK(cudaDeviceSynchronize());
  const long long expected = large_index_sum(n);
  const std::string what = "n = " + std::to_string(n) + " (more than 2^31; in[i] = 1 + i % 7, plus " +
                           std::to_string(kHighMark) + " from index 2^31 on): ";
  try {
    fn(in->data(), n, out.data(), nullptr);
    CUDALAB_CHECK(cudaDeviceSynchronize());
  } catch (const std::exception& e) {
    FAIL() << context(exercise, n, 0) << what << "the call failed: " << e.what()
           << "\nAn index computed in 32 bits wraps (int past 2^31 - 1 to a negative number, "
              "unsigned past 2^32 - 1 to 0) and reads outside the array: use std::size_t for "
              "every index, as in the lesson.";
  }
  const long long actual = out.download()[0];
  ASSERT_EQ(expected, actual) << context(exercise, n, 0) << what << "your sum is " << actual
                              << ", expected " << expected << ". "
                              << large_index_diagnosis(n, expected, actual);
}

}  // namespace cudalab::test::sum

/// Defines the suites Suite (int32, by size), Suite##Float (float, by size),
/// Suite##Cases (fixed cases on the GPU), Suite##LargeIndex (more than 2^31
/// elements, where the device has the memory) and Suite##BadInput (host only)
/// for the sum `function` of exercise `exercise` (e.g. "1.1 sum_atomic").
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
  class Suite##LargeIndex : public ::cudalab::test::GpuTest {};                                 \
  TEST_F(Suite##LargeIndex, Int32Above2To31) {                                                  \
    ::cudalab::test::sum::int32_large_index(exercise, Suite##Int, ::cudalab::test::sum::kAbove2To31); \
  }                                                                                             \
  TEST(Suite##BadInput, Int32Throws) { ::cudalab::test::sum::bad_input_throws(Suite##Int); }     \
  TEST(Suite##BadInput, FloatThrows) { ::cudalab::test::sum::bad_input_throws(Suite##Flt); }     \
  }  // namespace

/// Adds Suite##LargeIndex.Int32MaxElements (n = max_elements = 2^32 - 1, 16 GiB)
/// after CUDALAB_SUM_TEST_SUITES(Suite, ...). Only 1.4 uses it: in 1.1 to 1.3
/// the given launcher's grid of 256-thread blocks ends at thread 2^32 - 1, so
/// an unsigned index cannot wrap there, while 1.4's own launcher and offsets
/// (the tail's start plus the thread index) can.
#define CUDALAB_SUM_TEST_MAX_ELEMENTS(Suite, exercise)                                         \
  namespace {                                                                                   \
  TEST_F(Suite##LargeIndex, Int32MaxElements) {                                                 \
    ::cudalab::test::sum::int32_large_index(exercise, Suite##Int, ::cudalab::reduce::max_elements); \
  }                                                                                             \
  }  // namespace
