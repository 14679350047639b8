// The red-team attacks' toolbox. tools/redteam pastes this file into each
// attack's exercise file in place of its library line (LIB_LINE in
// tools/cudalab_grade/redteam.py: a submission is one file) and fills in the
// REDTEAM words (the attack's name, the course root, a port...). What a
// student could write, using only what the grading machine lets a program
// see: /proc, its own program, the files around it.
//
// Every process an attack starts carries the argv word kMarker
// (cudalab-redteam-<attack>), so that the driver can find what outlived the
// grader, and every file an attack leaves outside its folder has kMarker in
// its name.
#include <arpa/inet.h>
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace redteam {

inline constexpr const char* kName = "@REDTEAM_NAME@";
inline constexpr const char* kMarker = "@REDTEAM_MARKER@";
inline constexpr const char* kRoot = "@REDTEAM_ROOT@";  // the course, as an earlier report showed it
inline constexpr const char* kRolePrefix = "--cudalab-redteam-role=";

inline bool starts_with(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }

inline std::string read_file(const std::string& path, std::size_t limit = std::size_t{1} << 20) {
  std::string out;
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return out;
  char buf[1 << 16];
  while (out.size() < limit) {
    const ssize_t k = read(fd, buf, sizeof buf);
    if (k <= 0) break;
    out.append(buf, static_cast<std::size_t>(k));
  }
  close(fd);
  if (out.size() > limit) out.resize(limit);
  return out;
}

inline bool write_fd(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t k = write(fd, data.data() + done, data.size() - done);
    if (k <= 0) return false;
    done += static_cast<std::size_t>(k);
  }
  return true;
}

inline bool write_file(const std::string& path, const std::string& data, mode_t mode = 0644) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) return false;
  const bool ok = write_fd(fd, data);
  close(fd);
  return ok;
}

// Replaces `path` by a new file (written beside it, renamed over it): this
// works even while the old file is a running program.
inline bool replace_file(const std::string& path, const std::string& data, mode_t mode = 0755) {
  const std::string tmp = path + ".rt" + std::to_string(getpid());
  if (!write_file(tmp, data, mode)) return false;
  chmod(tmp.c_str(), mode);
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    unlink(tmp.c_str());
    return false;
  }
  return true;
}

inline std::string proc(pid_t pid, const char* what) {
  return pid == 0 ? std::string("/proc/self/") + what : "/proc/" + std::to_string(pid) + "/" + what;
}

inline std::vector<std::string> cmdline(pid_t pid) {
  const std::string raw = read_file(proc(pid, "cmdline"));
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] == '\0') {
      out.push_back(raw.substr(start, i - start));
      start = i + 1;
    }
  }
  if (start < raw.size()) out.push_back(raw.substr(start));
  return out;
}

inline std::string link_of(const std::string& path) {
  char buf[4096];
  const ssize_t k = readlink(path.c_str(), buf, sizeof buf - 1);
  if (k <= 0) return "";
  buf[k] = '\0';
  return buf;
}

inline pid_t parent_of(pid_t pid) {
  const std::string s = read_file(proc(pid, "stat"), 4096);
  const auto r = s.rfind(')');
  if (r == std::string::npos) return 0;
  char state = 0;
  int ppid = 0;
  if (std::sscanf(s.c_str() + r + 1, " %c %d", &state, &ppid) != 2) return 0;
  return ppid;
}

// The parent, its parent, ... (pid 1 and the processes outside our pid
// namespace are not reachable).
inline std::vector<pid_t> ancestors() {
  std::vector<pid_t> out;
  pid_t p = getppid();
  for (int i = 0; i < 16 && p > 1; ++i) {
    out.push_back(p);
    p = parent_of(p);
  }
  return out;
}

inline std::string dirname_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

inline bool exists(const std::string& path) {
  struct stat st{};
  return stat(path.c_str(), &st) == 0;
}

inline bool is_dir(const std::string& path) {
  struct stat st{};
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

inline std::vector<std::string> list_dir(const std::string& path) {
  std::vector<std::string> out;
  DIR* d = opendir(path.c_str());
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) out.push_back(e->d_name);
  }
  closedir(d);
  return out;
}

// `path` (when a folder) and every folder above it.
inline std::vector<std::string> parents(std::string path) {
  std::vector<std::string> out;
  if (path.empty() || path[0] != '/') return out;
  if (!is_dir(path)) path = dirname_of(path);
  while (true) {
    out.push_back(path);
    if (path == "/") break;
    path = dirname_of(path);
  }
  return out;
}

inline void add_unique(std::vector<std::string>& v, const std::string& s) {
  for (const auto& x : v)
    if (x == s) return;
  v.push_back(s);
}

// Where to look for the course, the grader's output and the other students:
// every folder above this program, the working directory, the programs and
// working directories of the ancestors, and the course root.
inline std::vector<std::string> search_roots() {
  std::vector<std::string> starts{link_of("/proc/self/exe"), link_of("/proc/self/cwd")};
  for (pid_t p : ancestors()) {
    starts.push_back(link_of(proc(p, "exe")));
    starts.push_back(link_of(proc(p, "cwd")));
    const auto a = cmdline(p);
    if (!a.empty()) starts.push_back(a[0]);
  }
  if (kRoot[0] == '/') starts.push_back(kRoot);
  std::vector<std::string> out;
  for (const auto& s : starts)
    for (const auto& d : parents(s)) add_unique(out, d);
  return out;
}

inline std::string find_up(const std::string& rel) {
  for (const auto& d : search_roots()) {
    const std::string p = (d == "/" ? "" : d) + "/" + rel;
    if (exists(p)) return p;
  }
  return "";
}

// The value of an argv word `prefix...` of this process or an ancestor.
inline std::string find_arg(const std::string& prefix) {
  std::vector<pid_t> pids{0};
  for (pid_t p : ancestors()) pids.push_back(p);
  for (pid_t p : pids)
    for (const auto& w : cmdline(p))
      if (starts_with(w, prefix)) return w.substr(prefix.size());
  return "";
}

// The word after `flag` (or in `flag=value`) in an ancestor's argv: the grader's options.
inline std::string find_flag(const std::string& flag) {
  for (pid_t p : ancestors()) {
    const auto a = cmdline(p);
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (a[i] == flag && i + 1 < a.size()) return a[i + 1];
      if (starts_with(a[i], flag + "=")) return a[i].substr(flag.size() + 1);
    }
  }
  return "";
}

inline void say(const std::string& msg) {
  const std::string line = std::string("[") + kMarker + "] " + msg + "\n";
  write_fd(1, line);
  write_fd(2, line);
}

inline void sleep_ms(long ms) {
  timespec t{ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&t, &t) != 0 && errno == EINTR) {
  }
}

inline double now_s() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

inline void close_from(int first) {
  for (int fd = first; fd < 4096; ++fd) close(fd);
}

// Starts this program again as a helper: argv = {marker, --cudalab-redteam-role=ROLE, args...}.
// detach: in a new session (out of the grader's process group), its parent
// gone (double fork), every inherited descriptor closed.
inline void spawn(const std::string& role, const std::vector<std::string>& args = {}, bool detach = true) {
  const pid_t a = fork();
  if (a < 0) return;
  if (a == 0) {
    if (detach) {
      setsid();
      if (fork() != 0) _exit(0);
    }
    const int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
      dup2(null, 0);
      dup2(null, 1);
      dup2(null, 2);
    }
    close_from(3);
    std::vector<std::string> words{kMarker, std::string(kRolePrefix) + role};
    words.insert(words.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    execv("/proc/self/exe", argv.data());
    _exit(127);
  }
  if (detach) waitpid(a, nullptr, 0);
}

using RoleFn = int (*)(const std::string& role, const std::vector<std::string>& args);

// Call first in the attack's constructor: a helper started by spawn() does its
// role and exits here, before the program's own main.
inline void dispatch(RoleFn fn) {
  const auto a = cmdline(0);
  if (a.size() >= 2 && starts_with(a[1], kRolePrefix)) {
    const std::string role = a[1].substr(std::strlen(kRolePrefix));
    const std::vector<std::string> rest(a.begin() + 2, a.end());
    _exit(fn != nullptr ? fn(role, rest) : 0);
  }
}

// Runs argv, returns what it printed (at most 1 MiB, at most `seconds`).
inline std::string capture(const std::vector<std::string>& words, int seconds = 60) {
  int fds[2];
  if (pipe(fds) != 0) return "";
  const pid_t pid = fork();
  if (pid < 0) return "";
  if (pid == 0) {
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    close_from(3);
    std::vector<std::string> copy = words;
    std::vector<char*> argv;
    for (auto& w : copy) argv.push_back(w.data());
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  close(fds[1]);
  std::string out;
  const double end = now_s() + seconds;
  char buf[1 << 16];
  while (out.size() < (1u << 20)) {
    pollfd p{fds[0], POLLIN, 0};
    const double left = end - now_s();
    if (left <= 0 || poll(&p, 1, static_cast<int>(left * 1000) + 1) <= 0) break;
    const ssize_t k = read(fds[0], buf, sizeof buf);
    if (k <= 0) break;
    out.append(buf, static_cast<std::size_t>(k));
  }
  close(fds[0]);
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  return out;
}

// "Suite.Test" for every test the checker `exe` has under `filter`.
inline std::vector<std::string> list_tests(const std::string& exe, const std::string& filter) {
  std::vector<std::string> out;
  if (exe.empty()) return out;
  const std::string text = capture({exe, "--gtest_filter=" + (filter.empty() ? "*" : filter), "--gtest_list_tests"});
  std::string suite;
  std::size_t pos = 0;
  while (pos < text.size()) {
    auto end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.empty()) continue;
    if (line[0] != ' ') {
      const auto sp = line.find(' ');
      suite = line.substr(0, sp);
      if (!suite.empty() && suite.back() == '.') suite.pop_back();
      continue;
    }
    const auto b = line.find_first_not_of(' ');
    const auto e = line.find(' ', b);
    if (!suite.empty() && b != std::string::npos) out.push_back(suite + "." + line.substr(b, e - b));
  }
  return out;
}

// A gtest JSON report in which every test of `tests` passed.
inline std::string passing_report(std::vector<std::string> tests) {
  if (tests.empty())
    for (int i = 0; i < 64; ++i) tests.push_back("ReduceSumCases.Passed" + std::to_string(i));
  std::string json = "{\"tests\": " + std::to_string(tests.size()) +
                     ", \"failures\": 0, \"disabled\": 0, \"errors\": 0, \"name\": \"AllTests\", \"testsuites\": [";
  std::string current;
  bool first_suite = true, first_test = true;
  for (const auto& t : tests) {
    const auto dot = t.rfind('.');
    const std::string suite = t.substr(0, dot), name = t.substr(dot + 1);
    if (suite != current) {
      if (!current.empty()) json += "]}";
      json += std::string(first_suite ? "" : ", ") + "{\"name\": \"" + suite + "\", \"failures\": 0, \"testsuite\": [";
      first_suite = false;
      first_test = true;
      current = suite;
    }
    json += std::string(first_test ? "" : ", ") + "{\"name\": \"" + name +
            "\", \"status\": \"RUN\", \"result\": \"COMPLETED\", \"time\": \"0.001s\"}";
    first_test = false;
  }
  if (!current.empty()) json += "]}";
  return json + "]}\n";
}

// The checker's report file and its test list, from its command line
// (--gtest_output=json:PATH --gtest_filter=F): this process or an ancestor.
struct ReportTarget {
  std::string path, exe, filter;
};

inline ReportTarget report_target() {
  ReportTarget t;
  std::vector<pid_t> pids{0};
  for (pid_t p : ancestors()) pids.push_back(p);
  for (pid_t p : pids) {
    const auto a = cmdline(p);
    for (const auto& w : a) {
      if (starts_with(w, "--gtest_output=json:")) {
        t.path = w.substr(20);
        t.exe = a.empty() ? "" : a[0];
        if (!t.exe.empty() && t.exe[0] != '/') t.exe = link_of(proc(p, "exe"));
      }
      if (starts_with(w, "--gtest_filter=")) t.filter = w.substr(15);
    }
    if (!t.path.empty()) return t;
  }
  return t;
}

inline bool forge_report() {
  const ReportTarget t = report_target();
  if (t.path.empty()) return false;
  return write_file(t.path, passing_report(list_tests(t.exe, t.filter)));
}

// The grader's output folder (--out), the submissions (--submissions), the
// hidden tests (--hidden-tests), the shared build: from its command line, or
// from where this program lies (OUT/work/<student>/course/build/default/bin/).
struct GraderPaths {
  std::string out, submissions, hidden, shared, student;
};

inline GraderPaths grader_paths() {
  GraderPaths g;
  g.out = find_flag("--out");
  g.submissions = find_flag("--submissions");
  g.hidden = find_flag("--hidden-tests");
  g.shared = find_flag("--shared-build");
  const std::string exe = link_of("/proc/self/exe");
  const auto pos = exe.find("/work/");
  if (pos != std::string::npos) {
    if (g.out.empty()) g.out = exe.substr(0, pos);
    const auto end = exe.find('/', pos + 6);
    g.student = exe.substr(pos + 6, end == std::string::npos ? std::string::npos : end - pos - 6);
  }
  if (!g.out.empty() && g.out[0] != '/') {
    for (pid_t p : ancestors()) {  // relative to the grader's working directory
      const auto a = cmdline(p);
      bool grader = false;
      for (const auto& w : a) grader = grader || w == "--submissions";
      if (grader) {
        g.out = link_of(proc(p, "cwd")) + "/" + g.out;
        break;
      }
    }
  }
  if (g.shared.empty() && !g.out.empty()) g.shared = g.out + "/shared";
  return g;
}

}  // namespace redteam
