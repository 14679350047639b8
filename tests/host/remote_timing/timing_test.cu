// How a benchmark program times a call into the runner (cudalab/bench.cuh,
// remote_checker.cu): once cudalab_remote_call_times has been called, each
// call is preceded by a null call with the same arguments, both are timed,
// and the difference is the function's own time. No GPU needed: a runner
// serves calls without device memory when the checker has none.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "api.hpp"
#include "cudalab/test/remote.hpp"

CUDALAB_REMOTE_remote_timing(CUDALAB_REMOTE_PROXY)

extern "C" int cudalab_remote_call_times(double* call_seconds, double* null_seconds);

namespace {

using cudalab::remote_timing::busy;
using cudalab::remote_timing::poke;

TEST(RemoteTiming, NullCallIsTimedBeforeEachCallAndNeverRunsTheFunction) {
  EXPECT_EQ(busy(0), 1000);  // starts the runner; not timed
  double call = -1, null = -1;
  EXPECT_EQ(cudalab_remote_call_times(&call, &null), 0);  // null calls on from here
  EXPECT_EQ(call, 0.0);
  EXPECT_EQ(null, 0.0);

  EXPECT_EQ(busy(40), 2040);  // the null call before it did not run busy
  EXPECT_EQ(busy(0), 3000);
  ASSERT_EQ(cudalab_remote_call_times(&call, &null), 2);
  EXPECT_GT(null, 0.0);
  // 40 ms of the function, and the way there and back (twice for the call, twice for the null)
  EXPECT_GE(call - null, 0.040 - 0.005) << "call " << call << " s, null " << null << " s";
  EXPECT_LT(call - null, 0.040 + 0.035) << "call " << call << " s, null " << null << " s";

  ASSERT_EQ(cudalab_remote_call_times(&call, &null), 0);  // taken: cleared
  EXPECT_EQ(call, 0.0);
  EXPECT_EQ(busy(5), 4005);
  EXPECT_EQ(cudalab_remote_call_times(nullptr, nullptr), 1);
}

// The checker's buffers sit at the end of their mapping with poisoned bytes
// around them (remote_checker.cu): a write just outside one stays inside the
// mapping, where neither a fault nor compute-sanitizer memcheck reports it, so
// the checker looks at the poison after every call.
std::string poke_error(int* data, long long index) {
  try {
    poke(data, index, 7);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(RemoteGuards, AWriteJustOutsideABufferFailsTheCall) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) GTEST_SKIP() << "no CUDA device";
  int* inside = nullptr;
  int* after = nullptr;
  int* before = nullptr;
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&inside), 10 * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&after), 10 * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&before), 10 * sizeof(int)), cudaSuccess);

  EXPECT_EQ(poke_error(inside, 0), "");
  EXPECT_EQ(poke_error(inside, 9), "");
  int got[10] = {};
  ASSERT_EQ(cudaMemcpy(got, inside, sizeof got, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_EQ(got[0], 7);
  EXPECT_EQ(got[9], 7);

  const std::string past = poke_error(after, 10);
  EXPECT_NE(past.find("wrote past the end of a 40-byte buffer"), std::string::npos) << past;
  EXPECT_NE(past.find("byte 1 after its last byte"), std::string::npos) << past;

  const std::string early = poke_error(before, -1);
  EXPECT_NE(early.find("wrote before the start of a 40-byte buffer"), std::string::npos) << early;

  for (int* p : {inside, after, before}) EXPECT_EQ(cudaFree(p), cudaSuccess);
}

}  // namespace
