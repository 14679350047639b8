// The runner's checks of the exercise's contract (remote_runner.cu), with a
// "student" object that keeps or breaks each rule (api.hpp, runner.cu):
//  - the stream check: work enqueued on a default stream by a function that
//    was given a stream fails the call, with a message that says where the
//    stream goes; work on the given stream, or on a stream of its own ordered
//    by events, passes;
//  - the memory count: every reply says what device memory the exercise's
//    code still holds, and the test program's end fails when it holds more
//    than cudalab::test::kMaxHeldAllocations allocations (checked here on the
//    count; ctest host/remote-checks-leak runs the end-of-program check itself).
// A GPU is needed (the runner's device memory); without one the tests skip.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "api.hpp"
#include "cudalab/device.cuh"
#include "cudalab/test/harness.hpp"
#include "cudalab/test/remote.hpp"

CUDALAB_REMOTE_remote_checks(CUDALAB_REMOTE_PROXY)

extern "C" int cudalab_remote_held(unsigned long long* allocations, unsigned long long* bytes);

namespace {

using namespace cudalab::remote_checks;

constexpr int kN = 1000;
constexpr std::size_t kBytes = std::size_t{1} << 20;

class RemoteChecks : public cudalab::test::GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped() || HasFailure()) return;
    ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&data_), kN * sizeof(int)), cudaSuccess);
    ASSERT_EQ(cudaStreamCreate(&stream_), cudaSuccess);
  }
  void TearDown() override {
    if (stream_ != nullptr) EXPECT_EQ(cudaStreamDestroy(stream_), cudaSuccess);
    if (data_ != nullptr) EXPECT_EQ(cudaFree(data_), cudaSuccess);
    GpuTest::TearDown();
  }
  // The call's failure message ("" when it passed), and the values it left.
  std::string fill_error(int where, int value, cudaStream_t stream) {
    try {
      fill(data_, kN, value, where, stream);
    } catch (const std::logic_error& e) {
      return e.what();
    }
    return "";
  }
  std::vector<int> values() {
    std::vector<int> host(kN);
    EXPECT_EQ(cudaMemcpy(host.data(), data_, kN * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
    return host;
  }
  unsigned long long held() {
    unsigned long long allocations = 0, bytes = 0;
    EXPECT_EQ(cudalab_remote_held(&allocations, &bytes), 1) << "no runner answered";
    return allocations;
  }
  int* data_ = nullptr;
  cudaStream_t stream_ = nullptr;
};

TEST_F(RemoteChecks, WorkOnTheGivenStreamOrOneOrderedWithItPasses) {
  for (const int where : {kGiven, kOwnStream}) {
    for (const cudaStream_t s : {stream_, static_cast<cudaStream_t>(nullptr)}) {
      EXPECT_EQ(fill_error(where, 7 + where, s), "") << "where = " << where;
      EXPECT_EQ(values()[kN - 1], 7 + where) << "where = " << where;
    }
  }
}

// A null stream from the checker becomes the runner's stream too (remote.hpp):
// the tests that pass nullptr check the stream as well.
TEST_F(RemoteChecks, ALaunchOnADefaultStreamFailsTheCall) {
  for (const int where : {kNoStream, kStreamZero, kLegacy, kPerThread, kLaunchKernelZero}) {
    for (const cudaStream_t s : {stream_, static_cast<cudaStream_t>(nullptr)}) {
      const std::string error = fill_error(where, 40 + where, s);
      EXPECT_NE(error.find("fill_kernel"), std::string::npos) << "where = " << where << ": " << error;
      EXPECT_NE(error.find("went to the default stream"), std::string::npos) << "where = " << where << ": " << error;
      EXPECT_NE(error.find("kernel<<<grid, block, shared_bytes, stream>>>"), std::string::npos) << error;
      // The launch was made as written (a host loop waiting for it ends); the call failed after it.
      EXPECT_EQ(values()[kN - 1], 40 + where) << "where = " << where;
    }
  }
  const std::string legacy = fill_error(kLegacy, 1, stream_);
  EXPECT_NE(legacy.find("(cudaStreamLegacy)"), std::string::npos) << legacy;
  const std::string per_thread = fill_error(kPerThread, 1, stream_);
  EXPECT_NE(per_thread.find("(cudaStreamPerThread)"), std::string::npos) << per_thread;
}

TEST_F(RemoteChecks, AMemoryOperationOnTheDefaultStreamFailsTheCall) {
  const std::string memset = fill_error(kMemsetNoStream, 5, stream_);
  EXPECT_NE(memset.find("a cudaMemsetAsync went to the default stream (stream 0)"), std::string::npos) << memset;
  EXPECT_EQ(values()[kN - 1], 0x05050505);
  const std::string memcpy = fill_error(kMemcpyNoStream, 9, stream_);
  EXPECT_NE(memcpy.find("a cudaMemcpyAsync went to the default stream"), std::string::npos) << memcpy;
  EXPECT_EQ(values()[kN - 1], 9);
}

TEST_F(RemoteChecks, FreedAndCachedAllocationsAreNotHeld) {
  const unsigned long long before = held();
  for (int i = 0; i < 10; ++i) {
    scratch(kBytes, kFreed, stream_);
    scratch(kBytes, kFreedAsync, stream_);
    scratch(kBytes, kFreedAsync, nullptr);
  }
  EXPECT_EQ(held(), before);
  for (int i = 0; i < 10; ++i) scratch(kBytes, kCached, stream_);
  EXPECT_LE(held(), before + 1);  // the first kCached call of the runner allocates it
  EXPECT_EQ(cudalab::test::held_memory_failure(held(), kBytes), "");
}

TEST_F(RemoteChecks, ALeakGrowsWithEveryCallAndFailsTheEndOfTheProgram) {
  const unsigned long long before = held();
  scratch(kBytes, kLeak, stream_);
  scratch(kBytes, kLeakAsync, stream_);
  EXPECT_EQ(held(), before + 2);
  for (int i = 0; i < 3; ++i) EXPECT_THROW(scratch(kBytes, kLeakThenThrow, stream_), std::invalid_argument);
  EXPECT_EQ(held(), before + 5);
  unsigned long long allocations = 0, bytes = 0;
  ASSERT_EQ(cudalab_remote_held(&allocations, &bytes), 1);
  EXPECT_GE(bytes, 5 * kBytes);
  const std::string failure = cudalab::test::held_memory_failure(allocations, bytes);
  EXPECT_NE(failure.find("still holds " + std::to_string(allocations) + " device allocations"), std::string::npos)
      << failure;
  EXPECT_NE(failure.find("free in every path what each call allocates (cudaFree/cudaFreeAsync), including the "
                         "paths that throw"),
            std::string::npos)
      << failure;
  scratch(0, kFreeLeaked, stream_);
  EXPECT_EQ(held(), before);
}

// Under CUDALAB_DEVICE_PROFILE (ctest host/remote-checks-t4) the runner's launch check holds
// every launch to the profile, so what the exercise's code reads of the device must be the
// profile's too: a launch sized from cudaDevAttrMaxSharedMemoryPerBlockOptin (not through
// cudalab::device_limits()) fits, as it fits the real GPU. Without a profile the values are the
// device's own, which device_limits() also reports.
TEST_F(RemoteChecks, TheDeviceQueriesOfTheExerciseReportTheProfile) {
  const cudalab::DeviceLimits l = cudalab::device_limits();  // the checker's: the same profile
  ASSERT_EQ(cudaMemset(data_, 0, kN * sizeof(int)), cudaSuccess);
  ASSERT_NO_THROW(limits(data_, stream_));
  ASSERT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
  const std::vector<int> v = values();
  const std::string where = l.profile[0] != '\0' ? std::string(" under the profile ") + l.profile : "";
  EXPECT_EQ(v[kAttrOptin], static_cast<int>(l.shared_per_block_optin)) << "the opt-in attribute" << where;
  EXPECT_EQ(v[kPropOptin], static_cast<int>(l.shared_per_block_optin)) << "sharedMemPerBlockOptin" << where;
  EXPECT_EQ(v[kAttrSms], l.sm_count) << "the SM count attribute" << where;
  EXPECT_EQ(v[kPropSms], l.sm_count) << "multiProcessorCount" << where;
  EXPECT_EQ(v[kAttrThreadsPerSm], l.max_threads_per_sm) << where;
  EXPECT_GE(v[kOccupancy], 1) << where;
  EXPECT_LE(v[kOccupancy], l.max_threads_per_sm / 1024) << "resident 1024-thread blocks" << where;
  EXPECT_GT(v[kAvailableDynamic], 0) << where;
  if (l.profile[0] != '\0') {  // the real device's answer is its own business
    EXPECT_LE(v[kAvailableDynamic], static_cast<int>(l.shared_per_block_optin)) << where;
  }
  EXPECT_EQ(v[kSizedLaunch], 1) << "a launch with " << v[kAttrOptin]
                                << " bytes of dynamic shared memory did not run" << where;
}

// Run by ctest host/remote-checks-leak alone (--gtest_also_run_disabled_tests):
// leaks and leaves the end of the program to say so.
TEST_F(RemoteChecks, DISABLED_LeaksForTheEndOfProgramCheck) {
  for (unsigned long long i = 0; i <= cudalab::test::kMaxHeldAllocations; ++i) scratch(kBytes, kLeak, stream_);
}

}  // namespace
