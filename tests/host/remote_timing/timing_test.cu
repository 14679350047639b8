// How a benchmark program times a call into the runner (cudalab/bench.cuh,
// remote_checker.cu): once cudalab_remote_call_times has been called, each
// call is preceded by a null call with the same arguments, both are timed,
// and the difference is the function's own time. No GPU needed: a runner
// serves calls without device memory when the checker has none.
#include <gtest/gtest.h>

#include "api.hpp"
#include "cudalab/test/remote.hpp"

CUDALAB_REMOTE_remote_timing(CUDALAB_REMOTE_PROXY)

extern "C" int cudalab_remote_call_times(double* call_seconds, double* null_seconds);

namespace {

using cudalab::remote_timing::busy;

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

}  // namespace
