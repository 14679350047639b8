// How a benchmark program times a call into the runner (cudalab/bench.cuh,
// remote_checker.cu): once cudalab_remote_call_times has been called, each
// call is preceded by a null call with the same arguments, both are timed,
// and the difference is the function's own time. No GPU needed: a runner
// serves calls without device memory when the checker has none.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "api.hpp"
#include "cudalab/test/remote.hpp"
#include "remote_spin.hpp"

CUDALAB_REMOTE_remote_timing(CUDALAB_REMOTE_PROXY)

extern "C" int cudalab_remote_call_times(double* call_seconds, double* null_seconds);

namespace {

using cudalab::remote_timing::busy;
using cudalab::remote_timing::poke;
using cudalab::remote_timing::poke_hidden;

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

// The checker's side of busy-polling (tests/common/remote_spin.hpp; the
// runner's is in spin_test.cu): on a timed call it polls for the reply for at
// most spin::kWindow, then blocks as before; CUDALAB_REMOTE_SPIN=0 never polls.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (had_) {
      setenv(name_, old_.c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  bool had_ = false;
  std::string old_;
};

// CUDALAB_REMOTE_KEEP_MAPPINGS=1 (remote_checker.cu): timed round trips that
// reach the same buffers leave the runner's mappings in place. Every call must
// still write where it is told: into the same buffer again, into another one,
// and into a buffer made where a freed one was (a stale mapping would write
// into the freed memory and leave the new buffer as it was).
TEST(RemoteTiming, KeptMappingsServeTheSameBuffersAndNeverAStaleOne) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) GTEST_SKIP() << "no CUDA device";
  ScopedEnv keep("CUDALAB_REMOTE_KEEP_MAPPINGS", "1");
  cudalab_remote_call_times(nullptr, nullptr);  // timed calls (a null call before each), counts cleared
  const auto read = [](const int* p, int i) {
    int v = -1;
    EXPECT_EQ(cudaMemcpy(&v, p + i, sizeof v, cudaMemcpyDeviceToHost), cudaSuccess);
    return v;
  };
  int* a = nullptr;
  int* b = nullptr;
  ASSERT_EQ(cudaMalloc(&a, 16 * sizeof(int)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&b, 16 * sizeof(int)), cudaSuccess);
  for (int k = 0; k < 4; ++k) {  // the same buffer, call after call
    poke(a, k, 10 + k);
    EXPECT_EQ(read(a, k), 10 + k);
  }
  poke(b, 3, 33);  // another buffer
  EXPECT_EQ(read(b, 3), 33);
  poke(a, 5, 55);  // and back
  EXPECT_EQ(read(a, 5), 55);
  ASSERT_EQ(cudaFree(a), cudaSuccess);
  int* c = nullptr;
  ASSERT_EQ(cudaMalloc(&c, 16 * sizeof(int)), cudaSuccess);  // may take a's address
  ASSERT_EQ(cudaMemset(c, 0, 16 * sizeof(int)), cudaSuccess);
  poke(c, 5, 77);
  EXPECT_EQ(read(c, 5), 77) << "the runner wrote through a mapping of the freed buffer";
  poke(c, 5, 78);
  EXPECT_EQ(read(c, 5), 78);
  EXPECT_EQ(cudalab_remote_call_times(nullptr, nullptr), 8);
  // A call that reaches no buffer runs with none mapped, not with the last
  // call's: its store to c's address (hidden from the checker) faults.
  poke(c, 0, 1);
  EXPECT_ANY_THROW(poke_hidden(~reinterpret_cast<unsigned long long>(c), 99))
      << "a call that was given no buffer reached the buffer of the call before it";
  EXPECT_EQ(read(c, 0), 1) << "a call that was given no buffer wrote into the buffer of the call before it";
  for (int* p : {b, c}) EXPECT_EQ(cudaFree(p), cudaSuccess);
}

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

TEST(RemoteSpin, TheCheckerPollsForATimedReplyAtMostAWindowThenBlocks) {
  cudalab_remote_call_times(nullptr, nullptr);  // timed calls from here (the first test turned them on)
  const int ms = 60;  // three times the window: a poll that did not end would show
  {
    ScopedEnv always("CUDALAB_REMOTE_SPIN", "1");
    EXPECT_EQ(busy(0) % 1000, 0);
    // The poll yields its CPU to any thread that wants it (remote_spin.hpp): on a
    // busy machine it may spin little. Up to 5 tries; one with CPUs to spare must show it.
    bool spun = false;
    int quiet_tries = 0;
    for (int attempt = 0; attempt < 5 && !spun; ++attempt) {
      quiet_tries += cudalab::remote::spin::cpus_to_spare() ? 1 : 0;
      const double c0 = thread_cpu_seconds();
      EXPECT_EQ(busy(ms) % 1000, ms);
      const double spent = thread_cpu_seconds() - c0;
      EXPECT_LT(spent, 0.020 + 0.020) << "the checker's poll did not end after its window";
      spun = spent > 0.003;
    }
    EXPECT_TRUE(spun || quiet_tries == 0) << "the checker did not poll for the reply";
    if (!spun && quiet_tries == 0) std::printf("note: the machine was busy; the checker's poll was not seen\n");
  }
  {
    ScopedEnv never("CUDALAB_REMOTE_SPIN", "0");
    const double c0 = thread_cpu_seconds();
    EXPECT_EQ(busy(ms) % 1000, ms);
    EXPECT_LT(thread_cpu_seconds() - c0, 0.003) << "CUDALAB_REMOTE_SPIN=0, yet the checker polled";
  }
  EXPECT_GE(cudalab_remote_call_times(nullptr, nullptr), 3);  // all timed, and cleared
}

// A runner that does not answer a polled call is reported as one that does not
// answer a blocking call: CUDALAB_CALL_TIMEOUT from the call's start, the
// runner killed, the call failed. (The last test of this program's proxy
// calls: the next call starts a new runner, whose call count starts again.)
TEST(RemoteSpin, ARunnerThatHangsDuringThePollIsStillTimedOut) {
  cudalab_remote_call_times(nullptr, nullptr);
  ScopedEnv always("CUDALAB_REMOTE_SPIN", "1");
  // The runner is started before the time limit is set: the limit also bounds
  // the wait for a new runner's start, which on a GPU machine (CUDA's set-up)
  // takes longer than 0.1 s, and this test is about a hang during the call.
  busy(1);
  std::string what;
  double took = 0.0;
  {
    ScopedEnv timeout("CUDALAB_CALL_TIMEOUT", "0.1");
    const auto t0 = std::chrono::steady_clock::now();
    try {
      busy(5000);
    } catch (const std::runtime_error& e) {
      what = e.what();
    }
    took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  EXPECT_NE(what.find("stopped while waiting for the result: it did not answer and was killed"), std::string::npos)
      << what;
  EXPECT_LT(took, 0.1 + 1.0 + 1.0) << "the timeout, then a second for the runner to end";
  // A new runner, its start waited for under the default limit: under 0.1 s CUDA's
  // set-up on a GPU machine cut it short (H100, a79ce06: "stopped while starting it").
  EXPECT_EQ(busy(1) % 1000, 1);
}

}  // namespace
