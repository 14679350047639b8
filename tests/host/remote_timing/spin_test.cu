// The busy-polling of the timed round trips (tests/common/remote_spin.hpp):
// when the checker chooses it (CUDALAB_REMOTE_SPIN, the CPUs, the load), the
// bounded poll, and a real runner (remote_timing_runner_host) that busy-polls
// for spin::kWindow after a request flagged kSpinAfter and then blocks. No GPU:
// the runner here serves calls without device memory. The checker's side is
// tested in timing_test.cu (through the proxy: its calls' order matters there).
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "cudalab/test/remote.hpp"
#include "remote_common.hpp"
#include "remote_spin.hpp"

namespace {

namespace spin = cudalab::remote::spin;
namespace wire = cudalab::remote::wire;
using Mode = spin::Mode;
using std::chrono::milliseconds;

TEST(RemoteSpinDecision, TheVariableSaysNeverAlwaysOrAuto) {
  EXPECT_EQ(spin::parse_mode(nullptr), Mode::kNever);  // off until measured on a GPU
  EXPECT_EQ(spin::parse_mode(""), Mode::kNever);
  EXPECT_EQ(spin::parse_mode("0"), Mode::kNever);
  EXPECT_EQ(spin::parse_mode("1"), Mode::kAlways);
  EXPECT_EQ(spin::parse_mode("auto"), Mode::kAuto);
  EXPECT_EQ(spin::parse_mode("yes"), Mode::kNever);
  EXPECT_EQ(spin::parse_mode(" 1"), Mode::kNever);
}

TEST(RemoteSpinDecision, TheRunningCountIsLoadavgsFourthFieldBeforeItsSlash) {
  EXPECT_EQ(spin::parse_running("0.08 0.03 0.01 2/112 3207\n"), 2);
  EXPECT_EQ(spin::parse_running("12.50 9.75 8.00 17/1900 99"), 17);
  EXPECT_EQ(spin::parse_running("0.00 0.00 0.00 0/5 1"), 0);
  EXPECT_EQ(spin::parse_running(""), -1);
  EXPECT_EQ(spin::parse_running("0.08 0.03 0.01"), -1);
  EXPECT_EQ(spin::parse_running("0.08 0.03 0.01 /112 3207"), -1);
  EXPECT_EQ(spin::parse_running("0.08 0.03 0.01 2 3207"), -1);
  EXPECT_EQ(spin::parse_running("0.08 0.03 0.01 x2/112 3207"), -1);
  EXPECT_EQ(spin::parse_running("0.08 0.03 0.01 99999999999/112 3207"), -1);
}

TEST(RemoteSpinDecision, ACgroupQuotaCountsWholeCpusRoundedUp) {
  EXPECT_EQ(spin::parse_cpu_max("max 100000\n"), 0);
  EXPECT_EQ(spin::parse_cpu_max("200000 100000\n"), 2);
  EXPECT_EQ(spin::parse_cpu_max("150000 100000"), 2);
  EXPECT_EQ(spin::parse_cpu_max("50000 100000"), 1);
  EXPECT_EQ(spin::parse_cpu_max(""), -1);
  EXPECT_EQ(spin::parse_cpu_max("lots 100000"), -1);
  EXPECT_EQ(spin::parse_cpu_max("100000 0"), -1);
  EXPECT_EQ(spin::parse_cpu_max("-5 100000"), -1);
  EXPECT_EQ(spin::parse_cgroup_path("4:memory:/a/b\n0::/user.slice/cudalab/7\n"), "/user.slice/cudalab/7");
  EXPECT_EQ(spin::parse_cgroup_path("0::/\n"), "/");
  EXPECT_EQ(spin::parse_cgroup_path("4:memory:/a/b\n1:cpu:/\n"), "");
}

TEST(RemoteSpinDecision, AutoSpinsOnlyWithTwoCpusNobodyElseWants) {
  EXPECT_FALSE(spin::decide(Mode::kNever, 64, 1));
  EXPECT_TRUE(spin::decide(Mode::kAlways, 1, 500));
  EXPECT_TRUE(spin::decide(Mode::kAlways, 8, -1));
  EXPECT_TRUE(spin::decide(Mode::kAuto, 2, 1));  // the caller alone on two CPUs
  EXPECT_TRUE(spin::decide(Mode::kAuto, 2, 0));
  EXPECT_FALSE(spin::decide(Mode::kAuto, 2, 2));  // one other thread wants a CPU
  EXPECT_TRUE(spin::decide(Mode::kAuto, 16, 15));
  EXPECT_FALSE(spin::decide(Mode::kAuto, 16, 16));
  EXPECT_FALSE(spin::decide(Mode::kAuto, 1, 1));   // one CPU: the two sides would take turns
  EXPECT_FALSE(spin::decide(Mode::kAuto, 8, -1));  // load unknown
  const int cpus = spin::usable_cpus();
  EXPECT_GE(cpus, 1);
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) EXPECT_LE(cpus, CPU_COUNT(&set));
}

TEST(RemoteSpinPoll, ReturnsOnDataOrHangUpAndGivesUpAfterItsBudget) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  using Clock = std::chrono::steady_clock;
  auto t0 = Clock::now();
  EXPECT_FALSE(spin::poll_readable(sv[0], milliseconds(30)));
  const auto waited = Clock::now() - t0;
  EXPECT_GE(waited, milliseconds(30));
  EXPECT_LT(waited, milliseconds(30 + 200));
  EXPECT_FALSE(spin::poll_readable(sv[0], milliseconds(0)));  // polls once

  std::thread late([fd = sv[1]] {
    std::this_thread::sleep_for(milliseconds(5));
    const char c = 'x';
    (void)!write(fd, &c, 1);
  });
  t0 = Clock::now();
  EXPECT_TRUE(spin::poll_readable(sv[0], milliseconds(2000)));
  EXPECT_LT(Clock::now() - t0, milliseconds(1000));
  late.join();
  char c = 0;
  ASSERT_EQ(read(sv[0], &c, 1), 1);  // it read nothing itself

  close(sv[1]);  // the peer is gone: readable (the blocking read then reports it)
  EXPECT_TRUE(spin::poll_readable(sv[0], milliseconds(2000)));
  EXPECT_EQ(read(sv[0], &c, 1), 0);
  close(sv[0]);
}

// The runner of this test program: its path with _test_ made _runner_, as the checker finds it.
std::string runner_path() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "";
  std::string path(buf, static_cast<std::size_t>(n));
  return path.substr(0, path.rfind('/') + 1) + "remote_timing_runner_host";
}

// Nanoseconds a process's main thread has run (/proc/PID/schedstat); -1 when unknown.
long long cpu_ns(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/schedstat");
  long long ns = -1;
  if (!(in >> ns)) return -1;
  return ns;
}

// A checker of its own, over the wire: starts the runner without device
// memory (the address range 0:0) and sends it raw messages.
class WireChecker {
 public:
  WireChecker() {
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return;
    const std::string path = runner_path();
    pid_ = fork();
    if (pid_ == 0) {
      if (dup2(sv[1], 3) < 0) _exit(127);
      execl(path.c_str(), path.c_str(), "--cudalab-runner-fd", "3", "--cudalab-address-range", "0:0",
            static_cast<char*>(nullptr));
      _exit(127);
    }
    close(sv[1]);
    sock_ = sv[0];
  }
  ~WireChecker() {
    if (sock_ >= 0) close(sock_);  // the runner sees the end and exits
    if (pid_ > 0) waitpid(pid_, nullptr, 0);
  }
  pid_t pid() const { return pid_; }

  // Receives one message of `kind`; false when the runner is gone or sent another.
  bool receive(wire::Kind kind) {
    wire::Header h{};
    cudalab::remote::Bytes payload;
    return wire::recv_message(sock_, &h, &payload, nullptr) && h.kind == kind;
  }
  // The runner's null call, flagged or not, and its reply.
  bool null_call(std::uint32_t flags) {
    cudalab::remote::Writer w;
    const std::string key = cudalab::remote::kNullCall;
    w.put(static_cast<std::uint64_t>(key.size()));
    w.put_raw(key.data(), key.size());
    w.put(static_cast<std::uint64_t>(0));
    w.put_raw(nullptr, 0);
    const std::size_t bytes = w.size();
    cudalab::remote::Bytes msg = w.take();
    return wire::send_message(sock_, wire::kCall, msg.data(), bytes, {}, flags) && receive(wire::kReply);
  }
  // A kMap of no buffers (nothing to map without a GPU), flagged or not.
  bool empty_map(std::uint32_t flags) { return wire::send_message(sock_, wire::kMap, nullptr, 0, {}, flags); }

 private:
  int sock_ = -1;
  pid_t pid_ = -1;
};

// The seconds the runner's main thread runs while the test sleeps `idle`; -1 when unknown.
double cpu_during(pid_t pid, milliseconds idle) {
  const long long a = cpu_ns(pid);
  std::this_thread::sleep_for(idle);
  const long long b = cpu_ns(pid);
  return (a < 0 || b < 0) ? -1.0 : static_cast<double>(b - a) / 1e9;
}

TEST(RemoteSpinRunner, AfterAFlaggedRequestItBusyPollsForAWindowThenBlocks) {
  WireChecker checker;
  ASSERT_GT(checker.pid(), 0);
  ASSERT_TRUE(checker.receive(wire::kReady)) << "the runner did not start: " << runner_path();
  ASSERT_TRUE(checker.null_call(0));
  if (cpu_ns(checker.pid()) <= 0) GTEST_SKIP() << "no /proc/PID/schedstat to read the runner's CPU time from";
  const milliseconds idle(150);  // far beyond the window: a spin that did not end would show
  const double window = std::chrono::duration<double>(spin::kWindow).count();

  // After an unflagged call the runner blocks: no CPU while the checker is away.
  EXPECT_LT(cpu_during(checker.pid(), idle), 0.003);

  // After a flagged call's reply, or a flagged kMap (its kCall follows), it polls
  // for up to the window, then blocks. The poll yields its CPU to any thread that
  // wants it: on a busy machine it may spin little. Up to 5 tries; one with
  // CPUs to spare must show it.
  for (const bool map : {false, true}) {
    bool spun = false;
    int quiet_tries = 0;
    for (int attempt = 0; attempt < 5 && !spun; ++attempt) {
      quiet_tries += spin::cpus_to_spare() ? 1 : 0;
      ASSERT_TRUE(map ? checker.empty_map(wire::kSpinAfter) : checker.null_call(wire::kSpinAfter));
      const double spent = cpu_during(checker.pid(), idle);
      EXPECT_LT(spent, window + 0.030) << "the runner's busy-poll did not end after its window";
      spun = spent > 0.003;
    }
    EXPECT_TRUE(spun || quiet_tries == 0)
        << "the runner did not busy-poll after a kSpinAfter " << (map ? "map" : "reply");
    if (!spun && quiet_tries == 0) std::printf("note: the machine was busy; the runner's poll was not seen\n");
  }

  // The call after those maps, unflagged, is served, and ends the window: no CPU after it.
  ASSERT_TRUE(checker.null_call(0));
  EXPECT_LT(cpu_during(checker.pid(), idle), 0.003);

  // A request that arrives during a window is served at once, and an unflagged one ends it.
  ASSERT_TRUE(checker.null_call(wire::kSpinAfter));
  ASSERT_TRUE(checker.null_call(0));
  EXPECT_LT(cpu_during(checker.pid(), idle), 0.003);
}

}  // namespace
