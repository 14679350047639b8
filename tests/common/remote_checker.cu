// The checker's side of cudalab/test/remote.hpp: device allocations the
// runner can map (cudaMalloc and cudaFree are wrapped at link time with
// -Wl,--wrap), the runner process, and one call.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "cudalab/error.cuh"
#include "cudalab/test/remote.hpp"
#include "remote_common.hpp"
#include "remote_spin.hpp"

extern "C" cudaError_t __real_cudaMalloc(void** ptr, size_t size);
extern "C" cudaError_t __real_cudaFree(void* ptr);

namespace cudalab::remote {
namespace {

using wire::Driver;

// compute-sanitizer's --error-exitcode when it runs as the runner's prefix (tools/grade, gpu-check)
constexpr int kSanitizerExit = 86;
constexpr const char* kKilled = "it did not answer and was killed";
constexpr std::size_t kPointerAlign = 256;           // what cudaMalloc guarantees
constexpr unsigned char kPoison = 0xA5;              // the bytes around every buffer
// A call may copy this much from device to host (counters, flags per
// level), or a quarter of the bytes its buffers hold, whichever is more.
constexpr std::size_t kHostCopyFloor = std::size_t{1} << 20;
constexpr std::size_t kScanLimit = std::size_t{256} << 10;  // nested pointers: buffers up to 256 KiB
// Address space (no memory) beyond twice the device's memory, for sparse
// buffers (cudalab/test/sparse_device_array.cuh): a graph of 2^32 - 1 edges
// reserves 16 GiB for its heads and 16 GiB for its weights.
constexpr std::size_t kSparseAddressSpace = std::size_t{64} << 30;

struct Allocation {
  CUdeviceptr va = 0;        // start of the mapping
  std::size_t mapped = 0;    // bytes mapped (a multiple of the granularity)
  std::size_t size = 0;      // bytes asked for
  std::size_t unbacked = 0;  // a sparse buffer's first bytes of the mapping, reserved but with no memory
                             // (whole granules): its memory is mapped at va + unbacked (0 for cudaMalloc)
  CUdeviceptr user = 0;      // what cudaMalloc returned: the mapping's end, less the size
  std::size_t head = 0;      // poisoned bytes just before user (at most kPointerAlign)
  std::size_t tail = 0;      // poisoned bytes from user + size to the mapping's end
  CUmemGenericAllocationHandle handle = 0;
  int fd = -1;               // exported on the first call that needs it
  std::uint64_t serial = 0;  // this allocation's number, never reused (kept mappings)
};

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? std::string(v) : fallback;
}

// Splits a JSON list of strings (CUDALAB_RUNNER_PREFIX); only what the grader
// writes: ["a", "b\"c"] with \\ \" \n \t \/ escapes.
std::vector<std::string> parse_json_words(const std::string& s) {
  std::vector<std::string> out;
  std::size_t i = s.find('[');
  if (i == std::string::npos) throw std::runtime_error("CUDALAB_RUNNER_PREFIX is not a JSON list");
  for (++i; i < s.size();) {
    const char c = s[i];
    if (c == ']') return out;
    if (c == ',' || c == ' ' || c == '\n' || c == '\t' || c == '\r') {
      ++i;
      continue;
    }
    if (c != '"') throw std::runtime_error("CUDALAB_RUNNER_PREFIX: a list of strings expected");
    std::string word;
    for (++i; i < s.size() && s[i] != '"'; ++i) {
      if (s[i] == '\\' && i + 1 < s.size()) {
        const char e = s[++i];
        word += e == 'n' ? '\n' : e == 't' ? '\t' : e;
      } else {
        word += s[i];
      }
    }
    ++i;
    out.push_back(word);
  }
  throw std::runtime_error("CUDALAB_RUNNER_PREFIX: unterminated list");
}

class Checker {
 public:
  static Checker& get() {
    static Checker* c = new Checker();  // never destroyed: allocations may outlive statics
    return *c;
  }

  // cudaMalloc's buffers: memory behind every byte (backed = size). A
  // sparse buffer (cudalab_remote_malloc_sparse) reserves its whole range,
  // but has memory only for its last `backed` bytes, rounded up to whole
  // granules; *unbacked_bytes (when given) says how many of its first bytes
  // have none.
  cudaError_t allocate(void** ptr, std::size_t size, std::size_t backed, std::size_t* unbacked_bytes = nullptr) {
    std::lock_guard<std::mutex> lock(mu_);
    try {
      init_memory();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s\n", e.what());
      return cudaErrorMemoryAllocation;
    }
    if (region_ == 0) {  // no GPU: the runtime's own error
      if (unbacked_bytes == nullptr) return __real_cudaMalloc(ptr, size);
      return no_device_ ? cudaErrorNoDevice : cudaErrorNotSupported;
    }
    Allocation a;
    a.serial = ++serials_;
    a.size = size;
    a.mapped = (std::max<std::size_t>(size, 1) + granularity_ - 1) / granularity_ * granularity_;
    // End-aligned: an overrun past the buffer leaves the mapping and faults.
    const std::size_t slack = (size + kPointerAlign - 1) / kPointerAlign * kPointerAlign;
    a.tail = slack - size;
    // Memory for the last `backed` bytes and the tail's poison, in whole
    // granules from the mapping's end; the rest of the range has none.
    const std::size_t want = std::min(backed, size) + a.tail;
    const std::size_t physical =
        std::min(a.mapped, std::max(granularity_, (want + granularity_ - 1) / granularity_ * granularity_));
    a.unbacked = a.mapped - physical;
    // One unmapped granule after each mapping: a read or write past it faults
    // (and compute-sanitizer memcheck names it) instead of reaching the next buffer.
    a.va = take_range(a.mapped + granularity_);
    if (a.va == 0) return cudaErrorMemoryAllocation;
    CUmemAllocationProp prop = wire::allocation_prop(device_);
    if (drv_.create(&a.handle, physical, &prop, 0) != CUDA_SUCCESS) {
      give_range(a.va, a.mapped + granularity_);
      return cudaErrorMemoryAllocation;
    }
    CUmemAccessDesc access = wire::access_desc(device_);
    if (drv_.map(a.va + a.unbacked, physical, 0, a.handle, 0) != CUDA_SUCCESS ||
        drv_.set_access(a.va + a.unbacked, physical, &access, 1) != CUDA_SUCCESS) {
      drv_.unmap(a.va + a.unbacked, physical);
      drv_.release(a.handle);
      give_range(a.va, a.mapped + granularity_);
      return cudaErrorMemoryAllocation;
    }
    a.user = a.va + a.mapped - slack;
    // The bytes between the buffer's end and the mapping's end, and up to
    // kPointerAlign bytes before its start, read as poison (0xA5), not as
    // zeros: a kernel that reads past n sums garbage, and a test sees it; one
    // that writes there changes the poison, and check_guards fails the call.
    // A sparse buffer's first bytes have no memory: a read before it faults.
    a.head = a.unbacked == 0 ? std::min<std::size_t>(kPointerAlign, a.user - a.va) : 0;
    if ((a.tail > 0 && cudaMemset(reinterpret_cast<void*>(a.user + size), kPoison, a.tail) != cudaSuccess) ||
        (a.head > 0 && cudaMemset(reinterpret_cast<void*>(a.user - a.head), kPoison, a.head) != cudaSuccess)) {
      drv_.unmap(a.va + a.unbacked, physical);
      drv_.release(a.handle);
      give_range(a.va, a.mapped + granularity_);
      return cudaErrorMemoryAllocation;
    }
    allocations_[a.va] = a;
    *ptr = reinterpret_cast<void*>(a.user);
    if (unbacked_bytes != nullptr) *unbacked_bytes = a.va + a.unbacked > a.user ? a.va + a.unbacked - a.user : 0;
    return cudaSuccess;
  }

  // True when ptr was ours (and is freed now).
  bool free(void* ptr, cudaError_t* err) {
    std::lock_guard<std::mutex> lock(mu_);
    Allocation* a = find(reinterpret_cast<CUdeviceptr>(ptr));
    if (a == nullptr || a->user != reinterpret_cast<CUdeviceptr>(ptr)) return false;
    *err = cudaDeviceSynchronize();  // cudaFree synchronizes; keep that
    if (std::find(kept_.begin(), kept_.end(), a->serial) != kept_.end()) {
      kept_.clear();  // the runner still maps it: the next round trip sends a kMap, which unmaps it there
      have_kept_ = false;
    }
    drv_.unmap(a->va + a->unbacked, a->mapped - a->unbacked);
    drv_.release(a->handle);
    if (a->fd >= 0) close(a->fd);
    const CUdeviceptr va = a->va;
    const std::size_t mapped = a->mapped;
    allocations_.erase(va);
    give_range(va, mapped + granularity_);
    return true;
  }

  Bytes invoke(const std::string& key, Bytes args, std::size_t arg_bytes, std::size_t* reply_bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    init_memory();
    // Everything the checker queued (uploads, poison fills) is done before the runner reads.
    if (region_ != 0) CUDALAB_CHECK(cudaDeviceSynchronize());
    std::vector<const Allocation*> reach = reachable(args, arg_bytes);
    ensure_runner();
    Bytes reply;
    if (timing_) {
      // The same trip without the exercise's work (a null call: mappings, one
      // empty kernel, synchronization), then the call: their difference is the
      // call's own time (its host code, its kernels and the gaps between them).
      // The checker's and the runner's contexts time-share the GPU, and the
      // first launch after the checker's own work (the fresh inputs, the L2
      // flush) waits for the GPU to switch to the runner's context, which can
      // take as long as a whole bandwidth-bound call (docs/results/remote-timing-h200.md).
      // An untimed null call pays that switch first, so the timed pair both
      // start in the runner's context and the difference holds no switch.
      // While the machine has CPUs to spare (remote_spin.hpp), neither side
      // sleeps in between: the checker busy-polls for each reply, and the
      // runner, after both null calls, for the next request (kSpinAfter), each
      // for at most spin::kWindow; so a wake-up from a deep CPU sleep state,
      // whose cost depends on the machine's load, is in neither timed trip.
      // After the call itself the runner blocks again.
      const bool awake = spin::should_spin();
      round_trip(kNullCall, reach, args, arg_bytes, &reply, awake, awake);
      const auto t0 = Clock::now();
      round_trip(kNullCall, reach, args, arg_bytes, &reply, awake, awake);
      const auto t1 = Clock::now();
      const std::size_t got = round_trip(key, reach, args, arg_bytes, &reply, awake, false);
      const auto t2 = Clock::now();
      null_seconds_ += std::chrono::duration<double>(t1 - t0).count();
      call_seconds_ += std::chrono::duration<double>(t2 - t1).count();
      ++timed_calls_;
      return finish_call(reply, got, reach, reply_bytes);
    }
    const std::size_t got = round_trip(key, reach, args, arg_bytes, &reply);
    return finish_call(reply, got, reach, reply_bytes);
  }

  // The device memory the exercise's code held after the last call (its
  // runner's allocations not yet freed; 0 when no runner runs): false when no
  // call has reached a runner since it last ended.
  bool held(unsigned long long* allocations, unsigned long long* bytes) {
    std::lock_guard<std::mutex> lock(mu_);
    if (allocations != nullptr) *allocations = held_allocations_;
    if (bytes != nullptr) *bytes = held_bytes_;
    return pid_ > 0;
  }

  // Benchmarks: from the first call on, every call is timed with a null call
  // before it; returns the calls since the last take and their seconds.
  int take_call_times(double* call_seconds, double* null_seconds) {
    std::lock_guard<std::mutex> lock(mu_);
    timing_ = true;
    const int calls = timed_calls_;
    if (call_seconds != nullptr) *call_seconds = call_seconds_;
    if (null_seconds != nullptr) *null_seconds = null_seconds_;
    timed_calls_ = 0;
    call_seconds_ = null_seconds_ = 0;
    return calls;
  }

 private:
  using Clock = std::chrono::steady_clock;

  // Sends the mappings of `reach` and one call, waits for the reply; returns its bytes.
  // `poll_reply`: busy-poll for the reply (spin::kWindow at most, within
  // CUDALAB_CALL_TIMEOUT) before the blocking wait. `runner_spins`: kSpinAfter
  // on the messages, so that the runner busy-polls for the next request.
  std::size_t round_trip(const std::string& key, const std::vector<const Allocation*>& reach, const Bytes& args,
                         std::size_t arg_bytes, Bytes* reply, bool poll_reply = false, bool runner_spins = false) {
    const std::uint32_t flags = runner_spins ? wire::kSpinAfter : 0u;
    // A timed round trip may leave the runner's mappings in place for the next
    // one (keep_mappings()): then the buffers are sent only when the call
    // reaches others than the runner holds, by their serials (an allocation
    // freed and another made at its address differ).
    const bool keep = timing_ && keep_mappings();
    std::vector<std::uint64_t> serials;
    for (const Allocation* a : reach) serials.push_back(a->serial);
    const bool send = !(keep && have_kept_ && serials == kept_);
    have_kept_ = false;  // until the reply: a lost runner keeps nothing
    // A call that reaches no buffer while the runner may still map earlier
    // ones sends an empty kMap: the runner unmaps them before the call, so no
    // call ever runs with buffers it was not given.
    if (send && reach.empty() && runner_may_map_) {
      if (!wire::send_message(sock_, wire::kMap, nullptr, 0, {}, flags)) lost("sending the buffers");
    }
    if (send) runner_may_map_ = false;  // a kMap unmaps everything the runner kept
    // The mappings of this call, in batches of at most kMaxFds descriptors.
    for (std::size_t first = 0; send && first < reach.size(); first += wire::kMaxFds) {
      const std::size_t last = std::min(reach.size(), first + wire::kMaxFds);
      std::vector<std::uint64_t> pairs;
      std::vector<int> fds;
      for (std::size_t i = first; i < last; ++i) {
        Allocation* a = find(reach[i]->va);
        if (a->fd < 0) {
          int fd = -1;
          drv_.check(drv_.export_handle(&fd, a->handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
                     "exporting a device buffer");
          a->fd = fd;
        }
        pairs.push_back(a->va + a->unbacked);  // the runner maps the memory, where it is
        pairs.push_back(a->mapped - a->unbacked);
        fds.push_back(a->fd);
      }
      if (!wire::send_message(sock_, wire::kMap, pairs.data(), pairs.size() * 8, fds, flags)) {
        lost("sending the buffers");
      }
    }
    Writer w;
    w.put(static_cast<std::uint64_t>(key.size()));
    w.put_raw(key.data(), key.size());
    w.put(static_cast<std::uint64_t>(arg_bytes));
    w.put_raw(args.data(), arg_bytes);
    const std::size_t bytes = w.size();
    Bytes msg = w.take();
    const std::uint32_t call_flags = flags | (keep ? wire::kKeepMapped : 0u);
    if (!wire::send_message(sock_, wire::kCall, msg.data(), bytes, {}, call_flags)) lost("sending the call");
    // The busy-poll only decides when the blocking wait starts: a reply, a
    // runner that died (hang-up) or the timeout are then taken as always.
    double polled = 0;
    if (poll_reply) {
      using std::chrono::nanoseconds;
      const double limit = call_timeout();
      nanoseconds budget = spin::kWindow;
      if (limit > 0) {
        budget = std::min(budget, std::chrono::duration_cast<nanoseconds>(std::chrono::duration<double>(limit)));
      }
      const auto p0 = Clock::now();
      if (!spin::poll_readable(sock_, budget)) polled = std::chrono::duration<double>(Clock::now() - p0).count();
    }
    wire::Header h{};
    if (!wait_readable(polled) || !wire::recv_message(sock_, &h, reply, nullptr) || h.kind != wire::kReply) {
      lost("waiting for the result");
    }
    if (keep) {
      kept_ = std::move(serials);
      have_kept_ = true;
    }
    runner_may_map_ = keep;  // without kKeepMapped the runner unmapped them after the call
    return h.bytes;
  }

  // CUDALAB_REMOTE_KEEP_MAPPINGS=1: timed round trips keep the runner's
  // mappings between calls that reach the same buffers. A call of a few
  // microseconds is timed as the difference of two round trips; their mapping
  // and unmapping (about 150 us on an H100, and varying by 100 us) is then left
  // out of both (docs/results/h100-51e84f4.md). Off by default until a GPU run
  // has checked it (the self-test RemoteTiming.KeptMappings*).
  static bool keep_mappings() { return env_or("CUDALAB_REMOTE_KEEP_MAPPINGS", "0") == "1"; }

  // Reads a reply: the result, or the exception to rethrow.
  Bytes finish_call(const Bytes& reply, std::size_t reply_size, const std::vector<const Allocation*>& reach,
                    std::size_t* reply_bytes) {
    Reader r(reply.data(), reply_size);
    const auto status = r.get<std::uint32_t>();
    const auto d2h = r.get<std::uint64_t>();
    held_allocations_ = r.get<std::uint64_t>();
    held_bytes_ = r.get<std::uint64_t>();
    const auto type_len = r.get<std::uint64_t>();
    const std::string type(r.get_raw(type_len), type_len);
    const auto what_len = r.get<std::uint64_t>();
    const std::string what(r.get_raw(what_len), what_len);
    const auto result_len = r.get<std::uint64_t>();
    const char* result = r.get_raw(result_len);
    std::size_t reach_bytes = 0;
    for (const Allocation* a : reach) reach_bytes += a->size;
    if (d2h > kHostCopyFloor && d2h > reach_bytes / 4) {
      throw std::runtime_error(
          "the exercise's code copied " + std::to_string(d2h) + " bytes from the device to the host during "
          "one call (its buffers hold " + std::to_string(reach_bytes) + " bytes): the work must be done by "
          "kernels on the device, not on the host");
    }
    if (status != wire::kCudaFault) check_guards(reach);
    if (status == wire::kOk) {
      Bytes out((result_len + 15) / 16 * 2, 0);
      std::memcpy(out.data(), result, result_len);
      *reply_bytes = result_len;
      return out;
    }
    if (status == wire::kCudaFault) stop_runner();  // its context is gone
    rethrow(status, type, what);
    return {};
  }

  // A write just past either end of a buffer the call could reach stays inside
  // its mapping: nothing faults, and compute-sanitizer memcheck, which sees
  // the whole mapping as allocated, says nothing. The poison around each
  // buffer must therefore be intact after every call, or the call fails.
  void check_guards(const std::vector<const Allocation*>& reach) {
    unsigned char bytes[kPointerAlign];
    for (const Allocation* a : reach) {
      for (const bool before : {true, false}) {
        const std::size_t n = before ? a->head : a->tail;
        if (n == 0) continue;
        const CUdeviceptr at = before ? a->user - a->head : a->user + a->size;
        CUDALAB_CHECK(cudaMemcpy(bytes, reinterpret_cast<const void*>(at), n, cudaMemcpyDeviceToHost));
        for (std::size_t i = 0; i < n; ++i) {
          if (bytes[i] == kPoison) continue;
          const std::size_t k = before ? n - i : i + 1;  // the first changed byte, counted from the edge
          throw std::runtime_error(
              "the exercise's code wrote " + std::string(before ? "before the start" : "past the end") +
              " of a " + std::to_string(a->size) + "-byte buffer it was given (byte " + std::to_string(k) +
              (before ? " before its first byte" : " after its last byte") +
              " changed): a missing bounds check, an index off by one, or a wrong size");
        }
      }
    }
  }

  Checker() = default;

  // Without a GPU there is no memory to share: calls still reach the runner
  // (argument checks need no device), with an empty address range.
  void init_memory() {
    if (region_ != 0 || no_device_) return;
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
      no_device_ = true;
      return;
    }
    CUDALAB_CHECK(__real_cudaFree(nullptr));  // the runtime's context, current
    CUDALAB_CHECK(cudaGetDevice(&device_));
    drv_.load();
    CUmemAllocationProp prop = wire::allocation_prop(device_);
    drv_.check(drv_.granularity(&granularity_, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED),
               "allocation granularity");
    std::size_t free_bytes = 0, total = 0;
    CUDALAB_CHECK(cudaMemGetInfo(&free_bytes, &total));
    region_size_ = (2 * total + kSparseAddressSpace + granularity_ - 1) / granularity_ * granularity_;
    // The range must be free in both processes. The runner, whose address space
    // may hold more (compute-sanitizer runs it), proposes one; the checker takes
    // it when it can, else its own, which the next runner is asked to reserve.
    CUdeviceptr proposed = 0;
    try {
      ensure_runner(&proposed);
    } catch (const std::exception&) {
      proposed = 0;  // the call that needs the runner reports why it cannot start
    }
    CUdeviceptr base = 0;
    drv_.check(drv_.reserve(&base, region_size_, granularity_, proposed, 0), "reserving the address range");
    if (base != proposed && sock_ >= 0) stop_runner();
    region_ = base;
    free_[region_] = region_size_;
  }

  CUdeviceptr take_range(std::size_t bytes) {
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      if (it->second >= bytes) {
        const CUdeviceptr va = it->first;
        const std::size_t left = it->second - bytes;
        free_.erase(it);
        if (left > 0) free_[va + bytes] = left;
        return va;
      }
    }
    return 0;
  }

  void give_range(CUdeviceptr va, std::size_t bytes) {
    auto it = free_.emplace(va, bytes).first;
    auto next = std::next(it);
    if (next != free_.end() && it->first + it->second == next->first) {
      it->second += next->second;
      free_.erase(next);
    }
    if (it != free_.begin()) {
      auto prev = std::prev(it);
      if (prev->first + prev->second == it->first) {
        prev->second += it->second;
        free_.erase(it);
      }
    }
  }

  Allocation* find(CUdeviceptr p) {
    auto it = allocations_.upper_bound(p);
    if (it == allocations_.begin()) return nullptr;
    --it;
    Allocation& a = it->second;
    return p <= a.va + a.mapped ? &a : nullptr;  // one past the end counts
  }

  // The allocations whose addresses appear in the arguments, and one level
  // down inside small reachable buffers (arrays of structs of pointers).
  std::vector<const Allocation*> reachable(const Bytes& args, std::size_t arg_bytes) {
    std::vector<const Allocation*> out;
    auto visit_words = [&](const std::uint64_t* words, std::size_t count, std::vector<Allocation*>* found) {
      for (std::size_t i = 0; i < count; ++i) {
        Allocation* a = find(static_cast<CUdeviceptr>(words[i]));
        if (a == nullptr || std::find(out.begin(), out.end(), a) != out.end()) continue;
        out.push_back(a);
        if (found != nullptr) found->push_back(a);
      }
    };
    std::vector<Allocation*> first;
    visit_words(args.data(), arg_bytes / 8, &first);
    std::vector<std::uint64_t> host;
    for (Allocation* a : first) {
      if (a->size == 0 || a->size > kScanLimit || a->unbacked != 0) continue;
      host.assign(a->size / 8, 0);
      if (host.empty()) continue;
      if (cudaMemcpy(host.data(), reinterpret_cast<void*>(a->user), host.size() * 8, cudaMemcpyDeviceToHost) !=
          cudaSuccess) {
        continue;
      }
      visit_words(host.data(), host.size(), nullptr);
    }
    return out;
  }

  std::string runner_path() const {
    std::string path = env_or("CUDALAB_RUNNER", "");
    if (!path.empty()) return path;
    char buf[4096];
    const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) throw std::runtime_error("cudalab remote: cannot find the test program's path");
    path.assign(buf, static_cast<std::size_t>(n));
    const std::size_t slash = path.rfind('/');
    std::string name = path.substr(slash + 1);
    for (const char* marker : {"_hidden_test_", "_test_", "_bench_"}) {
      const std::size_t at = name.rfind(marker);
      if (at != std::string::npos) {
        name = name.substr(0, at) + "_runner_" + name.substr(at + std::strlen(marker));
        return path.substr(0, slash + 1) + name;
      }
    }
    throw std::runtime_error("cudalab remote: no runner for " + path + " (set CUDALAB_RUNNER)");
  }

  // Whether the runner poisons shared memory before each call, and the device
  // memory the student's code allocates (remote_runner.cu):
  // in test programs, not in benchmarks (it would be timed) nor under
  // compute-sanitizer (CUDALAB_MAX_N set, or the tool in the runner's prefix),
  // where its big kernel would cost seconds a call.
  static bool poison_shared(const std::string& prefix) {
    if (!env_or("CUDALAB_MAX_N", "").empty() || prefix.find("compute-sanitizer") != std::string::npos) return false;
    char buf[4096];
    const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) return false;
    const std::string self(buf, static_cast<std::size_t>(n));
    return self.find("_test_", self.rfind('/') + 1) != std::string::npos;
  }

  // Closes every descriptor from `first` on (a forked child, before exec: system calls only).
  static void close_from(int first) {
#ifdef SYS_close_range
    if (syscall(SYS_close_range, static_cast<unsigned>(first), ~0u, 0u) == 0) return;
#endif
    rlimit lim{};
    const long most = getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY
                          ? static_cast<long>(std::min<rlim_t>(lim.rlim_cur, 1 << 20))
                          : 65536;
    for (long fd = first; fd < most; ++fd) close(static_cast<int>(fd));
  }

  // Starts the runner if none runs. With `proposed`, before the address range
  // exists: the runner reserves one of region_size_ bytes where it can and
  // *proposed is its start; otherwise it must reserve region_ exactly.
  void ensure_runner(CUdeviceptr* proposed = nullptr) {
    if (sock_ >= 0) return;
    const std::string runner = runner_path();
    std::vector<std::string> argv;
    const std::string prefix = env_or("CUDALAB_RUNNER_PREFIX", "");
    if (!prefix.empty()) argv = parse_json_words(prefix);
    argv.push_back(runner);
    argv.push_back("--cudalab-runner-fd");
    argv.push_back("3");
    argv.push_back("--cudalab-address-range");
    argv.push_back(std::to_string(region_) + ":" + std::to_string(region_size_));
    if (poison_shared(prefix)) argv.push_back("--cudalab-poison-shared");
    const std::string log = env_or("CUDALAB_RUNNER_LOG", "");
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
      throw std::runtime_error("cudalab remote: socketpair failed");
    }
    std::vector<char*> cargv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("cudalab remote: fork failed");
    if (pid == 0) {
      // The child: nothing but system calls until exec.
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(127);
      if (dup2(sv[1], 3) < 0) _exit(127);
      if (!log.empty()) {
        const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        if (fd >= 0) {
          dup2(fd, 1);
          dup2(fd, 2);
        }
      }
      const int in = open("/dev/null", O_RDONLY);
      if (in >= 0) dup2(in, 0);
      // Only the socket (3) and stdio go to the runner: not the checker's other descriptors
      // (the exported memory of every buffer it made, its CUDA context's device files), which a
      // runner started again after a crash would otherwise hold, buffers no call gave it among them.
      close_from(4);
      execvp(cargv[0], cargv.data());
      std::fprintf(stderr, "cudalab: cannot start the runner %s\n", cargv[0]);
      _exit(127);
    }
    close(sv[1]);
    sock_ = sv[0];
    pid_ = pid;
    wire::Header h{};
    Bytes payload;
    if (!wait_readable() || !wire::recv_message(sock_, &h, &payload, nullptr) || h.kind != wire::kReady) {
      lost("starting it");
    }
    Reader r(payload.data(), h.bytes);
    const auto ok = r.get<std::uint32_t>();
    const auto len = r.get<std::uint64_t>();
    const std::string why(r.get_raw(len), len);
    if (ok == 0) {
      stop_runner();
      throw std::runtime_error("cudalab remote: the runner could not start: " + why);
    }
    const auto base = r.get<std::uint64_t>();
    if (proposed != nullptr) *proposed = static_cast<CUdeviceptr>(base);
  }

  // CUDALAB_CALL_TIMEOUT: the seconds a call may take; 0 (or unset): no limit.
  static double call_timeout() { return std::atof(env_or("CUDALAB_CALL_TIMEOUT", "0").c_str()); }

  // Waits for the runner's next message, for what is left of CUDALAB_CALL_TIMEOUT
  // after `waited` seconds already spent polling; false when it ran out.
  bool wait_readable(double waited = 0) {
    const double limit = call_timeout();
    pollfd p{sock_, POLLIN, 0};
    int rc;
    do {
      rc = poll(&p, 1, limit > 0 ? static_cast<int>(std::max(limit - waited, 0.0) * 1000) : -1);
    } while (rc < 0 && errno == EINTR);
    return rc > 0;
  }

  // Waits up to `seconds` for the runner to exit by itself (then kills it) and
  // says how it ended; notes compute-sanitizer's error exit.
  std::string runner_end(double seconds = 1.0) {
    held_allocations_ = held_bytes_ = 0;  // a runner's memory ends with it
    if (pid_ <= 0) return "";
    int status = 0;
    pid_t done = 0;
    for (double waited = 0; done == 0 && waited < seconds; waited += 0.01) {
      done = waitpid(pid_, &status, WNOHANG);
      if (done == 0) usleep(10000);
    }
    if (done == 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      pid_ = -1;
      return kKilled;
    }
    pid_ = -1;
    if (WIFEXITED(status) && WEXITSTATUS(status) == kSanitizerExit) sanitizer_found_ = true;
    if (WIFSIGNALED(status)) {
      const int sig = WTERMSIG(status);
      const char* name = sigabbrev_np(sig);
      return std::string("it was killed by SIG") + (name != nullptr ? name : std::to_string(sig).c_str());
    }
    if (WIFEXITED(status)) {
      const int code = WEXITSTATUS(status);
      // A sandbox (bwrap, sandbox_init.sh) reports its child's signal N as 128 + N.
      const char* name = code > 128 && code < 128 + 65 ? sigabbrev_np(code - 128) : nullptr;
      if (name != nullptr && !env_or("CUDALAB_RUNNER_PREFIX", "").empty()) {
        return std::string("it was killed by SIG") + name + " (exit code " + std::to_string(code) + ")";
      }
      return "it exited with code " + std::to_string(code);
    }
    return "it ended";
  }

  void stop_runner() {
    if (sock_ >= 0) close(sock_);
    sock_ = -1;
    kept_.clear();
    have_kept_ = false;
    runner_may_map_ = false;  // the next runner starts with nothing mapped
    runner_end();
  }

 public:
  // The end of the test program: the runner sees its socket close and exits
  // (under compute-sanitizer, after the sanitizer's report). 86 when a runner
  // ended with compute-sanitizer's error exit code, else 0.
  int finish() {
    std::lock_guard<std::mutex> lock(mu_);
    if (sock_ >= 0) {
      close(sock_);
      sock_ = -1;
      const double limit = std::atof(env_or("CUDALAB_RUNNER_EXIT_TIMEOUT", "600").c_str());
      if (runner_end(limit) == kKilled) {
        std::fprintf(stderr, "cudalab: the exercise's runner did not end after the tests; killed\n");
      }
    }
    if (sanitizer_found_) {
      std::fprintf(stderr, "cudalab: compute-sanitizer found errors in the exercise's code (its report "
                           "is in the runner's output)\n");
      return kSanitizerExit;
    }
    return 0;
  }

 private:

  [[noreturn]] void lost(const char* when) {
    if (sock_ >= 0) close(sock_);
    sock_ = -1;
    const std::string how = runner_end();
    throw std::runtime_error(std::string("the exercise's code (its runner process) stopped while ") + when +
                             (how.empty() ? "" : ": " + how) +
                             " (a crash, an exit or a hang in the code under test; the next call starts "
                             "it again)");
  }

  [[noreturn]] static void rethrow(std::uint32_t status, const std::string& type, const std::string& what) {
    if (status == wire::kCudaFault) {
      throw std::runtime_error("CUDA error after the call, in the exercise's code: " + what);
    }
    if (status == wire::kBadRequest) throw std::logic_error("cudalab remote: " + what);
    if (type == "std::invalid_argument") throw std::invalid_argument(what);
    if (type == "std::out_of_range") throw std::out_of_range(what);
    if (type == "std::length_error") throw std::length_error(what);
    if (type == "std::domain_error") throw std::domain_error(what);
    if (type == "std::overflow_error") throw std::overflow_error(what);
    if (type == "std::underflow_error") throw std::underflow_error(what);
    if (type == "std::range_error") throw std::range_error(what);
    if (type == "std::bad_alloc") throw std::bad_alloc();
    if (type == "std::logic_error") throw std::logic_error(what);
    if (type == "cudalab::CudaError") throw std::runtime_error(what);
    throw std::runtime_error(what.empty() ? type : type + ": " + what);
  }

  std::mutex mu_;
  Driver drv_;
  int device_ = 0;
  std::size_t granularity_ = 0;
  CUdeviceptr region_ = 0;
  std::size_t region_size_ = 0;
  std::map<CUdeviceptr, std::size_t> free_;        // free address ranges: start -> bytes
  std::map<CUdeviceptr, Allocation> allocations_;  // by mapping start
  int sock_ = -1;
  pid_t pid_ = -1;
  bool no_device_ = false;
  bool sanitizer_found_ = false;
  std::uint64_t held_allocations_ = 0;  // what the last reply said (finish_call)
  std::uint64_t held_bytes_ = 0;
  bool timing_ = false;        // benchmarks: a null call before each call, both timed
  std::uint64_t serials_ = 0;  // allocations made so far (Allocation::serial)
  std::vector<std::uint64_t> kept_;  // what the runner keeps mapped (kKeepMapped), by serial
  bool have_kept_ = false;           // whether kept_ is known: a runner that keeps them answered
  bool runner_may_map_ = false;      // the runner may still map buffers of an earlier call (kKeepMapped)
  int timed_calls_ = 0;
  double call_seconds_ = 0;
  double null_seconds_ = 0;
};

}  // namespace

Bytes invoke(const std::string& key, Bytes args, std::size_t arg_bytes, std::size_t* reply_bytes) {
  return Checker::get().invoke(key, std::move(args), arg_bytes, reply_bytes);
}

}  // namespace cudalab::remote

extern "C" int cudalab_remote_finish() { return cudalab::remote::Checker::get().finish(); }

// For gtest_main.cu (a weak reference there): the device memory the exercise's
// code still holds in its runner; 1 when a runner answered, else 0 (nothing held).
extern "C" int cudalab_remote_held(unsigned long long* allocations, unsigned long long* bytes) {
  return cudalab::remote::Checker::get().held(allocations, bytes) ? 1 : 0;
}

// For cudalab/bench.cuh (a weak reference there): the exercise calls since
// the last take, their seconds and those of the null calls before them.
extern "C" int cudalab_remote_call_times(double* call_seconds, double* null_seconds) {
  return cudalab::remote::Checker::get().take_call_times(call_seconds, null_seconds);
}

extern "C" cudaError_t __wrap_cudaMalloc(void** ptr, size_t size) {
  if (ptr == nullptr) return cudaErrorInvalidValue;
  if (size == 0) return __real_cudaMalloc(ptr, size);
  return cudalab::remote::Checker::get().allocate(ptr, size, size);
}

// For cudalab/test/sparse_device_array.cuh: a buffer of `size` bytes whose
// address range is reserved but whose memory covers only its last `backed`
// bytes (whole granules); *unbacked gets the count of its first bytes without
// memory. Freed by cudaFree. The runner maps it as it maps every buffer.
extern "C" cudaError_t cudalab_remote_malloc_sparse(void** ptr, size_t size, size_t backed, size_t* unbacked) {
  if (ptr == nullptr || unbacked == nullptr || size == 0) return cudaErrorInvalidValue;
  return cudalab::remote::Checker::get().allocate(ptr, size, backed, unbacked);
}

extern "C" cudaError_t __wrap_cudaFree(void* ptr) {
  if (ptr == nullptr) return __real_cudaFree(ptr);
  cudaError_t err = cudaSuccess;
  if (cudalab::remote::Checker::get().free(ptr, &err)) return err;
  return __real_cudaFree(ptr);
}
