/// @file remote_spin.hpp
/// @brief Busy-polling for the timed round trips of the checker/runner split
///        (cudalab/test/remote.hpp): when to do it, and the bounded poll.
///
/// A benchmark times a call into the runner by the checker's wall clock around
/// the round trip, less a null call (remote_checker.cu). For a call of a few
/// microseconds of GPU work, most of that round trip is two processes waking
/// up from a blocking wait; on an idle machine, whose CPUs sleep deeply, a
/// wake-up costs tens of microseconds more than on a busy one, so the measured
/// time depended on the machine's load. The timed round trips therefore
/// busy-poll instead, for at most kWindow each: the checker for the reply, the
/// runner (told by wire::kSpinAfter in the request's header) for the next
/// request. Then both fall back to the blocking wait they had before. They do
/// so only while the machine has CPUs to spare (or CUDALAB_REMOTE_SPIN=1), so
/// that a class graded in parallel on a busy machine loses no CPU time to it.
///
/// Nothing here needs a GPU: the parsers and decide() are pure functions
/// (tests/host/remote_timing/timing_test.cu tests them).
#pragma once

#include <poll.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

namespace cudalab::remote::spin {

/// @brief How long one busy-poll lasts at most before the blocking wait: the
///        checker's for a reply, the runner's for the next request (20 ms).
///        A wait longer than this costs no CPU beyond it.
inline constexpr std::chrono::milliseconds kWindow{20};

/// @brief What CUDALAB_REMOTE_SPIN asks for.
/// Off by default: with one sendmsg a message, an idle H100 already times
/// 7.5's launch-bound call as a busy one does, and polling measured no gain
/// (docs/results/h100-4cb86b3.md); opt in with CUDALAB_REMOTE_SPIN=auto or =1.
enum class Mode {
  kAuto,    ///< "auto": spin while the machine has CPUs to spare
  kNever,   ///< unset, "0" or any other value: never spin; every wait blocks
  kAlways,  ///< "1": spin on every timed round trip, whatever the load
};

/// @brief The mode a value of CUDALAB_REMOTE_SPIN names.
/// @param value the variable's value; null when it is unset
/// @return kAuto for "auto", kAlways for "1", kNever for anything else (null,
///         empty, "0", or a value it does not know: the default, never an error)
inline Mode parse_mode(const char* value) {
  if (value == nullptr) return Mode::kNever;
  const std::string v(value);
  if (v == "auto") return Mode::kAuto;
  if (v == "1") return Mode::kAlways;
  return Mode::kNever;
}

/// @brief The number of runnable threads in the text of /proc/loadavg (its
///        fourth field, "running/total": "0.08 0.03 0.01 2/112 3207" gives 2).
///        The reading thread counts itself.
/// @return the count (>= 0), or -1 when the text does not have that form
inline int parse_running(const std::string& loadavg) {
  std::istringstream in(loadavg);
  std::string field;
  for (int i = 0; i < 4; ++i) {
    if (!(in >> field)) return -1;
  }
  const std::size_t slash = field.find('/');
  if (slash == 0 || slash == std::string::npos) return -1;
  int running = 0;
  for (std::size_t i = 0; i < slash; ++i) {
    if (field[i] < '0' || field[i] > '9' || running > 1000000) return -1;
    running = running * 10 + (field[i] - '0');
  }
  return running;
}

/// @brief The CPUs' worth of time a cgroup v2 `cpu.max` text allows, rounded
///        up ("150000 100000": 2; "max 100000": no limit).
/// @return the count (>= 1), 0 when there is no limit, -1 when the text does
///         not have the form "quota period" (quota "max" or a positive
///         integer of microseconds, period a positive integer)
inline int parse_cpu_max(const std::string& text) {
  std::istringstream in(text);
  std::string quota;
  long long period = 0;
  if (!(in >> quota >> period) || period <= 0) return -1;
  if (quota == "max") return 0;
  char* end = nullptr;
  const long long q = std::strtoll(quota.c_str(), &end, 10);
  if (end == quota.c_str() || *end != '\0' || q <= 0) return -1;
  return static_cast<int>(std::min<long long>((q + period - 1) / period, 1 << 20));
}

/// @brief This process's cgroup v2 path in the text of /proc/self/cgroup (the
///        line "0::/path"; "0::/" gives "/").
/// @return the path, relative to the cgroup v2 mount; empty when the text has
///         no cgroup v2 line
inline std::string parse_cgroup_path(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("0::", 0) == 0) return line.substr(3);
  }
  return "";
}

/// @brief Whether to busy-poll, given the mode and the machine's state.
/// @param mode    what CUDALAB_REMOTE_SPIN asks for
/// @param cpus    the CPUs this process may run on (usable_cpus())
/// @param running the runnable threads on the machine, the caller included
///                (parse_running()); negative when unknown
/// @return kNever: false; kAlways: true; kAuto: true when, besides the caller,
///         at most `cpus` - 2 threads are runnable, so that the checker and
///         the runner can both spin on CPUs nobody else wants; false when the
///         count is unknown or `cpus` < 2
inline bool decide(Mode mode, int cpus, int running) {
  if (mode == Mode::kNever) return false;
  if (mode == Mode::kAlways) return true;
  if (running < 0 || cpus < 2) return false;
  const int others = std::max(running - 1, 0);
  return others + 2 <= cpus;
}

namespace detail {
inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) return "";
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}
}  // namespace detail

/// @brief The CPUs this process may use: its affinity mask's count, at most
///        the quota of its cgroup v2 `cpu.max` and of its ancestors' (under
///        /sys/fs/cgroup) where one is set. Reads /proc and /sys.
/// @return at least 1 (1 when nothing can be read)
inline int usable_cpus() {
  int cpus = 0;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) cpus = CPU_COUNT(&set);
  if (cpus <= 0) cpus = static_cast<int>(std::max(sysconf(_SC_NPROCESSORS_ONLN), 1L));
  std::string path = parse_cgroup_path(detail::read_text("/proc/self/cgroup"));
  while (!path.empty() && path[0] == '/') {
    const int quota = parse_cpu_max(detail::read_text("/sys/fs/cgroup" + (path == "/" ? "" : path) + "/cpu.max"));
    if (quota > 0) cpus = std::min(cpus, quota);
    if (path == "/") break;
    const std::size_t slash = path.rfind('/');
    path = slash == 0 ? "/" : path.substr(0, slash);
  }
  return std::max(cpus, 1);
}

/// @brief The runnable threads on the machine now, the caller included
///        (/proc/loadavg; a few microseconds).
/// @return the count, or -1 when /proc/loadavg cannot be read or parsed
inline int running_threads() { return parse_running(detail::read_text("/proc/loadavg")); }

/// @brief Whether the machine has CPUs to spare for both sides to poll now:
///        decide() in auto mode with usable_cpus() (read once per process)
///        and running_threads().
inline bool cpus_to_spare() {
  static const int cpus = usable_cpus();
  return decide(Mode::kAuto, cpus, running_threads());
}

/// @brief Whether the timed round trip about to start should busy-poll:
///        never unless CUDALAB_REMOTE_SPIN says 1 (always) or auto
///        (cpus_to_spare()).
inline bool should_spin() {
  const Mode mode = parse_mode(std::getenv("CUDALAB_REMOTE_SPIN"));
  if (mode != Mode::kAuto) return mode == Mode::kAlways;
  return cpus_to_spare();
}

/// @brief Busy-polls `fd` (poll() with a zero timeout, then sched_yield(), in
///        a loop) until it is readable or `budget` has passed. Never blocks
///        longer than that; reads nothing. The yield costs nothing on a CPU
///        nobody else wants, and gives it up to a thread that does (the peer,
///        when CUDALAB_REMOTE_SPIN=1 forces a poll on a busy machine).
/// @param fd     a socket
/// @param budget the longest wall time to poll (steady clock); <= 0 polls once
/// @return true when `fd` is readable, hung up or in error (the caller's
///         blocking read then returns at once, with data or the error it has
///         always reported); false when `budget` passed first
inline bool poll_readable(int fd, std::chrono::nanoseconds budget) {
  const auto deadline = std::chrono::steady_clock::now() + budget;
  pollfd p{fd, POLLIN, 0};
  for (;;) {
    const int rc = poll(&p, 1, 0);
    if (rc > 0 || (rc < 0 && errno != EINTR)) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    sched_yield();  // alone on its CPU: returns at once; else lets the other thread run
  }
}

}  // namespace cudalab::remote::spin
