/// @file harness.hpp
/// @brief What every cudalab test uses: the GPU fixture that skips (or, under
///        CUDALAB_REQUIRE_GPU=1, fails) without a device, per-test seeds that
///        CUDALAB_SEED overrides, size caps for sanitizer runs, and the
///        command that reruns exactly the failing case.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace cudalab::test {

/// @return true when CUDALAB_REQUIRE_GPU is set to a non-empty value other than 0.
bool gpu_required();

/// @return true when a CUDA device is usable (probed once, at start-up).
bool gpu_available();

/// @brief The seed of the running test: CUDALAB_SEED when it is set, else a
///        fixed value derived from the test's full name (so every test has its
///        own data, the same on every run and every machine).
std::uint64_t seed();

/// @brief The largest input size tests may use: CUDALAB_MAX_N when it is set
///        (sanitizer runs set it, since they slow kernels a hundredfold), else
///        no limit. Tests skip cases above it and say so.
std::size_t max_n();

/// @brief The shell command that reruns only the current test with `seed`:
///        `CUDALAB_SEED=<seed> <program> --gtest_filter=<full test name>`.
std::string rerun_command(std::uint64_t seed);

/// @brief The context line every failure message starts with:
///        `[<exercise id> <function>] n = <n>, seed = <seed>` and, on the next
///        line, `rerun: <command>`.
std::string context(const std::string& exercise, std::size_t n, std::uint64_t seed);

/// The most device allocations the exercise's code may still hold when its
/// test program ends: a cache kept between calls (a scratch buffer or two,
/// grown when a larger call needs it) stays within it, a leak of one
/// allocation a call (a scratch never freed, a path that throws before its
/// cudaFree) passes it within a few calls.
inline constexpr unsigned long long kMaxHeldAllocations = 4;

/// @brief The failure message of the end-of-program memory check: empty when
///        `allocations` (live device allocations of the exercise's code, of
///        `bytes` in all) is at most kMaxHeldAllocations. The test program's
///        environment runs the check after its last test, with what the
///        runner's last reply said (remote_runner.cu); a failure there appears
///        in the gtest report as the suite NonTestSuiteFailure.
std::string held_memory_failure(unsigned long long allocations, unsigned long long bytes);

/// @brief Fixture for tests that need a GPU: skips with "no CUDA device", or
///        fails under CUDALAB_REQUIRE_GPU=1; after the test, surfaces any
///        asynchronous kernel fault as a failure.
class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override;
  void TearDown() override;
};

/// @brief GpuTest with a value parameter (typically the input size).
template <class Param>
class GpuTestWithParam : public GpuTest, public ::testing::WithParamInterface<Param> {};

}  // namespace cudalab::test

/// @brief Skips the current test (with the reason) when `n` exceeds max_n().
#define CUDALAB_SKIP_IF_ABOVE_MAX_N(n)                                                   \
  do {                                                                                   \
    if ((n) > ::cudalab::test::max_n())                                                  \
      GTEST_SKIP() << "n = " << (n) << " is above CUDALAB_MAX_N = " << ::cudalab::test::max_n(); \
  } while (0)
