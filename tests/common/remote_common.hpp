// What the checker (remote_checker.cu) and the runner (remote_runner.cu)
// share: the wire format, the socket framing with descriptor passing, and the
// CUDA driver functions of the virtual-memory API, looked up at run time
// through the runtime (cudaGetDriverEntryPoint), so that no program links
// libcuda and a machine without a driver still runs the host tests.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace cudalab::remote::wire {

constexpr std::uint32_t kMagic = 0xC0DA1AB5u;
constexpr int kMaxFds = 200;  // descriptors in one message (SCM_MAX_FD is 253)

enum Kind : std::uint32_t {
  kReady = 1,   // runner -> checker: the address range is reserved (payload: ok, message)
  kMap = 2,     // checker -> runner: (va, size) pairs, one descriptor each
  kCall = 3,    // checker -> runner: key length, key, argument bytes
  kReply = 4,   // runner -> checker: status, type, message, result bytes
};

enum Status : std::uint32_t {
  kOk = 0,
  kThrew = 1,       // the student's function threw (type and message given)
  kCudaFault = 2,   // an asynchronous CUDA error after the call: the runner exits
  kBadRequest = 3,  // no such function, a mapping failed: a grader problem
};

/// Header flags (Header::flags).
enum Flag : std::uint32_t {
  /// checker -> runner, on a timed round trip's messages (remote_spin.hpp):
  /// once done with this message (a call: after its reply), busy-poll for the
  /// next one for up to spin::kWindow before blocking. A message without it
  /// leaves a kMap's window running (its kCall follows) and ends a kCall's.
  kSpinAfter = 1u,
  /// checker -> runner, on a kCall of a timed round trip where the checker
  /// keeps the runner's mappings (CUDALAB_REMOTE_KEEP_MAPPINGS): after the
  /// call the runner leaves the call's buffers mapped; the next round trip
  /// either sends no kMap (the same buffers: the runner uses them as they are)
  /// or a kMap, before which the runner unmaps them. Without it the runner
  /// unmaps a call's buffers after its reply is made, as for every test.
  kKeepMapped = 2u,
};

struct Header {
  std::uint32_t magic;
  std::uint32_t kind;
  std::uint64_t bytes;  // payload bytes after the header
  std::uint32_t fds;    // descriptors attached to the header
  std::uint32_t flags;  // Flag bits; 0 from the runner
};

/// Sends header + payload in one sendmsg (one wake-up of the peer); `fds`
/// ride on the header, `flags` go in it. Bytes a signal cut off are sent
/// after. False when the peer is gone.
inline bool send_message(int sock, Kind kind, const void* payload, std::size_t bytes,
                         const std::vector<int>& fds = {}, std::uint32_t flags = 0) {
  Header h{kMagic, kind, bytes, static_cast<std::uint32_t>(fds.size()), flags};
  iovec iov[2] = {{&h, sizeof h}, {const_cast<void*>(payload), bytes}};
  msghdr msg{};
  msg.msg_iov = iov;
  msg.msg_iovlen = bytes > 0 ? 2 : 1;
  std::vector<char> control;
  if (!fds.empty()) {
    control.resize(CMSG_SPACE(sizeof(int) * fds.size()));
    msg.msg_control = control.data();
    msg.msg_controllen = control.size();
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
  }
  ssize_t sent;
  do {
    sent = sendmsg(sock, &msg, MSG_NOSIGNAL);
  } while (sent < 0 && errno == EINTR);
  if (sent <= 0) return false;
  // A blocking stream socket sends everything unless a signal interrupts it:
  // the rest, header first, without the descriptors (they went with the first byte).
  std::size_t done = static_cast<std::size_t>(sent);
  const std::size_t total = sizeof h + bytes;
  while (done < total) {
    const bool in_header = done < sizeof h;
    const char* p = in_header ? reinterpret_cast<const char*>(&h) + done
                              : static_cast<const char*>(payload) + (done - sizeof h);
    const std::size_t left = in_header ? sizeof h - done : total - done;
    ssize_t n = send(sock, p, left, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

inline bool read_exact(int sock, void* out, std::size_t bytes) {
  char* p = static_cast<char*>(out);
  while (bytes > 0) {
    ssize_t n = recv(sock, p, bytes, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    bytes -= static_cast<std::size_t>(n);
  }
  return true;
}

/// Receives one message; false when the peer is gone or sent garbage.
/// The payload lands in 16-byte words; `max_bytes` bounds it.
inline bool recv_message(int sock, Header* h, std::vector<std::uint64_t>* payload, std::vector<int>* fds,
                         std::size_t max_bytes = std::size_t{1} << 30) {
  iovec iov{h, sizeof *h};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * kMaxFds)];
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  ssize_t n;
  do {
    n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC | MSG_WAITALL);
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(sizeof *h)) return false;
  if (fds != nullptr) fds->clear();
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
      const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (std::size_t i = 0; i < count; ++i) {
        int fd;
        std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
        if (fds != nullptr) {
          fds->push_back(fd);
        } else {
          close(fd);
        }
      }
    }
  }
  if (h->magic != kMagic || h->bytes > max_bytes) return false;
  payload->assign((h->bytes + 15) / 16 * 2, 0);
  return read_exact(sock, payload->data(), h->bytes);
}

/// The driver's virtual-memory functions, found through the runtime.
struct Driver {
  decltype(&::cuMemCreate) create = nullptr;
  decltype(&::cuMemRelease) release = nullptr;
  decltype(&::cuMemAddressReserve) reserve = nullptr;
  decltype(&::cuMemAddressFree) unreserve = nullptr;
  decltype(&::cuMemMap) map = nullptr;
  decltype(&::cuMemUnmap) unmap = nullptr;
  decltype(&::cuMemSetAccess) set_access = nullptr;
  decltype(&::cuMemGetAllocationGranularity) granularity = nullptr;
  decltype(&::cuMemExportToShareableHandle) export_handle = nullptr;
  decltype(&::cuMemImportFromShareableHandle) import_handle = nullptr;
  decltype(&::cuGetErrorName) error_name = nullptr;

  /// Loads every entry point; throws std::runtime_error naming the missing one.
  void load() {
    get("cuMemCreate", &create);
    get("cuMemRelease", &release);
    get("cuMemAddressReserve", &reserve);
    get("cuMemAddressFree", &unreserve);
    get("cuMemMap", &map);
    get("cuMemUnmap", &unmap);
    get("cuMemSetAccess", &set_access);
    get("cuMemGetAllocationGranularity", &granularity);
    get("cuMemExportToShareableHandle", &export_handle);
    get("cuMemImportFromShareableHandle", &import_handle);
    get("cuGetErrorName", &error_name);
  }

  /// "CUDA_ERROR_X" for a driver result.
  std::string name(CUresult r) const {
    const char* s = nullptr;
    if (error_name != nullptr && error_name(r, &s) == CUDA_SUCCESS && s != nullptr) return s;
    return "CUresult " + std::to_string(static_cast<int>(r));
  }

  void check(CUresult r, const char* what) const {
    if (r != CUDA_SUCCESS) throw std::runtime_error(std::string("cudalab remote: ") + what + ": " + name(r));
  }

 private:
  template <class F>
  static void get(const char* symbol, F* fn) {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult found{};
#if CUDART_VERSION >= 12050
    cudaError_t err = cudaGetDriverEntryPointByVersion(symbol, &p, 12000, cudaEnableDefault, &found);
#else
    cudaError_t err = cudaGetDriverEntryPoint(symbol, &p, cudaEnableDefault, &found);
#endif
    if (err != cudaSuccess || found != cudaDriverEntryPointSuccess || p == nullptr) {
      throw std::runtime_error(std::string("cudalab remote: the CUDA driver has no ") + symbol);
    }
    *fn = reinterpret_cast<F>(p);
  }
};

/// The allocation properties both sides use: pinned device memory of
/// `device`, exportable as a POSIX file descriptor.
inline CUmemAllocationProp allocation_prop(int device) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  return prop;
}

inline CUmemAccessDesc access_desc(int device) {
  CUmemAccessDesc access{};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = device;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  return access;
}

}  // namespace cudalab::remote::wire
