// The runner's side of cudalab/test/remote.hpp: the program that holds the
// student's object. It maps the buffers each call can reach, runs the call,
// synchronizes, unmaps them and answers. It decides nothing: the checker
// that started it reads the buffers and gives the verdict.
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cudalab/device.cuh"
#include "cudalab/error.cuh"
#include "cudalab/test/remote.hpp"
#include "remote_common.hpp"
#include "remote_spin.hpp"

// The host-computation guard. The student's object is linked with these
// functions wrapped (-Wl,--wrap): every copy from device to host during a
// call is counted and sent with the reply (the checker refuses a call that
// moved its data to the host), and host memory a kernel could write directly
// (pinned, mapped, managed) is refused: no exercise needs it.
namespace {
// The count of a call's device-to-host bytes lives alone on a page of its own, read-only
// but while the runner itself writes it (d2h_set: its wrappers add, each call starts at 0).
// A submission that writes to it (found by its value, or by its place beside the runner's
// other globals) faults instead of hiding its copies, and making the page writable takes
// mprotect, an import no exercise may have (tools/cudalab_grade/objcheck.py). Where
// mprotect fails, or the system's pages are larger than 4 KiB, the count stays writable and
// the guard works as before.
struct alignas(4096) GuardedCount {
  std::size_t bytes;
  char page[4096 - sizeof(std::size_t)];
};
GuardedCount g_d2h{};
bool g_d2h_locked = false;
// Only where the page is at most the struct's 4 KiB and divides it: a larger page (64 KiB on
// some Arm systems) holds the runner's other globals too, which mprotect would make read-only.
bool d2h_page_fits() {
  const long page = sysconf(_SC_PAGESIZE);
  return page > 0 && page <= static_cast<long>(sizeof(GuardedCount)) && sizeof(GuardedCount) % page == 0;
}
void d2h_lock(bool locked) {
  if (!g_d2h_locked && locked) {
    g_d2h_locked = d2h_page_fits() && mprotect(&g_d2h, sizeof g_d2h, PROT_READ) == 0;
  } else if (g_d2h_locked && !locked && mprotect(&g_d2h, sizeof g_d2h, PROT_READ | PROT_WRITE) == 0) {
    g_d2h_locked = false;
  }
}
// Adds to the count (the runner's wrappers), or sets it (reset: 0 before each call).
void d2h_set(std::size_t bytes, bool add) {
  const bool was = g_d2h_locked;
  d2h_lock(false);
  g_d2h.bytes = add ? g_d2h.bytes + bytes : bytes;
  if (was) d2h_lock(true);
}
void d2h_add(std::size_t bytes) { d2h_set(bytes, true); }
std::size_t d2h_bytes() { return g_d2h.bytes; }
bool g_infra = true;  // the runner's own calls (driver entry points) are allowed

// What the runtime says p is (cudaMemoryTypeUnregistered: pageable host memory).
// An address it cannot tell is taken for device memory: a copy is counted only
// when its source may be the device's and its destination surely is the host's.
cudaMemoryType memory_type(const void* p) {
  cudaPointerAttributes a{};
  if (p == nullptr || cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();
    return cudaMemoryTypeDevice;
  }
  return a.type;
}
// Memory a kernel writes (managed memory is both the device's and the host's).
bool device_memory(const void* p) {
  const cudaMemoryType t = memory_type(p);
  return t == cudaMemoryTypeDevice || t == cudaMemoryTypeManaged;
}
// Memory the host reads.
bool host_memory(const void* p) {
  const cudaMemoryType t = memory_type(p);
  return t == cudaMemoryTypeHost || t == cudaMemoryTypeUnregistered || t == cudaMemoryTypeManaged;
}
// A copy from the device to the host, whatever its kind says: with unified
// addressing the driver takes the direction from the pointers, so a copy from
// device memory into host memory declared cudaMemcpyHostToDevice (or
// DeviceToDevice) may still land on the host.
bool device_to_host(const void* dst, const void* src, cudaMemcpyKind kind) {
  if (kind == cudaMemcpyDeviceToHost) return true;
  return device_memory(src) && host_memory(dst);
}
void count(const void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind) {
  if (device_to_host(dst, src, kind)) d2h_add(bytes);
}

// The launch check. Under CUDALAB_DEVICE_PROFILE every kernel the student's
// code launches (<<<>>>, cudaLaunchKernel, cudaLaunchKernelEx,
// cudaLaunchCooperativeKernel: wrapped with -Wl,--wrap) must fit the
// profile's limits: static + dynamic shared memory per block within its
// opt-in limit, threads per block within its limit. A launch that does not
// is not made; the call then fails with the first such launch's
// description (cudalab::DeviceLimitError), as the same code would on that GPU.
bool g_profiled = false;            // a profile is set (and the runner has a device)
bool g_poison_shared = false;       // test programs: shared memory poisoned before each call
bool g_poison_allocations = false;  // test programs: the student's device allocations poisoned
cudalab::DeviceLimits g_limits{};   // its limits, read once at start
// The first breach of the current call's contract (a launch beyond the profile,
// work on the default stream): after the call, whatever the call returned or
// threw, it fails with this exception type and message. Empty: none.
std::string g_refused;
const char* g_refused_type = "";

void refuse(const char* type, std::string what) {
  if (!g_refused.empty()) return;  // the first breach is the one the student reads
  g_refused = std::move(what);
  g_refused_type = type;
}

// The kernel's name, as cudaFuncGetName gives it ("a kernel" when the runtime cannot say).
const char* kernel_name(const void* func) {
  const char* name = nullptr;
  if (cudaFuncGetName(&name, func) != cudaSuccess || name == nullptr) {
    cudaGetLastError();
    name = "a kernel";
  }
  return name;
}

// A kernel's static shared memory (0 when the runtime cannot say).
std::size_t static_shared_bytes(const void* func) {
  cudaFuncAttributes attr{};
  if (cudaFuncGetAttributes(&attr, func) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return attr.sharedSizeBytes;
}

bool launch_fits(const void* func, dim3 block, std::size_t dynamic_shared) {
  if (!g_profiled) return true;
  try {
    const std::string what = std::string("the launch of ") + kernel_name(func);
    cudalab::check_launch_fits(g_limits, what.c_str(),
                               static_cast<unsigned long long>(block.x) * block.y * block.z,
                               static_shared_bytes(func), dynamic_shared);
  } catch (const cudalab::DeviceLimitError& e) {
    refuse("cudalab::DeviceLimitError", e.what());
    return false;
  }
  return true;
}

// The stream check. Every exercise function enqueues its work on the stream
// it is given and returns without waiting. A function that was given the
// runner's stream (cudalab::remote::stream_given) and enqueues work of the
// student's code (not g_infra) on a default stream (0, cudaStreamLegacy,
// cudaStreamPerThread) fails the call: a kernel launch, a cudaMemcpyAsync (2D,
// 3D), a cudaMemsetAsync, a cudaMallocAsync or a cudaFreeAsync. The runner's
// stream is a blocking one, so the legacy default stream's implicit
// synchronization gives right results here; a caller with a non-blocking
// stream would see that work race with its own. Work on another stream the
// student's code created is left alone: events can order it with the given
// stream, and nothing here can tell whether they do. The work is made as
// written (on a blocking stream it is ordered as the student meant), so a host
// loop that waits for its results ends, and the call fails after it returns.
bool default_stream(cudaStream_t s) { return s == nullptr || s == cudaStreamLegacy || s == cudaStreamPerThread; }
const char* stream_name(cudaStream_t s) {
  if (s == cudaStreamLegacy) return "cudaStreamLegacy";
  if (s == cudaStreamPerThread) return "cudaStreamPerThread";
  return "stream 0";
}
bool checks_stream(cudaStream_t s) { return !g_infra && cudalab::remote::stream_given() && default_stream(s); }
void check_launch_stream(const void* func, cudaStream_t s) {
  if (!checks_stream(s)) return;
  refuse("std::logic_error", std::string("the launch of ") + kernel_name(func) + " went to the default stream (" +
                                 stream_name(s) + "), not to the stream the function was given: pass it as "
                                 "the launch's fourth argument, kernel<<<grid, block, shared_bytes, stream>>>(...)");
}
void check_stream(const char* call, cudaStream_t s) {
  if (!checks_stream(s)) return;
  refuse("std::logic_error", std::string("a ") + call + " went to the default stream (" + stream_name(s) +
                                 "), not to the stream the function was given: pass it as the " + call +
                                 "'s stream argument; if a helper of the course made it (a buffer's fill_bytes, "
                                 "a stack's clear: their stream argument defaults to stream 0), give the "
                                 "helper the function's stream");
}
}  // namespace

extern "C" {
cudaError_t __real_cudaLaunchKernel(const void*, dim3, dim3, void**, size_t, cudaStream_t);
}

namespace {
// Shared-memory poison. In a test program (the checker passes
// --cudalab-poison-shared; not in benchmarks, not under the sanitizer) every
// exercise call starts after a kernel that fills every SM's shared memory with
// 0x7F bytes (a large int, a float near 3.4e38). A kernel that reads shared
// memory it never wrote (a counter array not zeroed, an index one past its
// array) then reads that, as it would read whatever an earlier kernel left on
// another GPU, instead of the zeros a fresh GPU often holds, and fails its
// tests. Correct code never reads shared memory before writing it, so this
// cannot fail it. The launch bypasses the profile's launch check (it is the
// runner's, not the student's) and uses the device's real limit.
__global__ void poison_shared_kernel(unsigned words) {
  extern __shared__ unsigned poison_words[];
  volatile unsigned* s = poison_words;  // stores nothing reads: keep them
  for (unsigned i = threadIdx.x; i < words; i += blockDim.x) s[i] = 0x7F7F7F7Fu;
}
unsigned g_poison_blocks = 0;
std::size_t g_poison_bytes = 0;

// Reads the device's limits and allows the kernel its largest shared memory; a
// device or runtime that refuses leaves the poison off (tests run as before).
void setup_poison() {
  int device = 0, sms = 0, optin = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) != cudaSuccess ||
      cudaFuncSetAttribute(poison_shared_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, optin) != cudaSuccess ||
      cudaFuncSetAttribute(poison_shared_kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                           cudaSharedmemCarveoutMaxShared) != cudaSuccess) {
    cudaGetLastError();
    g_poison_shared = false;
    return;
  }
  g_poison_blocks = static_cast<unsigned>(2 * sms);  // one at a time per SM: each takes all of it
  g_poison_bytes = static_cast<std::size_t>(optin);
}

// Enqueues the poison on `stream` before a call; a failed launch turns it off.
void poison_shared(cudaStream_t stream) {
  unsigned words = static_cast<unsigned>(g_poison_bytes / sizeof(unsigned));
  void* args[] = {&words};
  if (__real_cudaLaunchKernel(reinterpret_cast<const void*>(poison_shared_kernel), dim3(g_poison_blocks),
                              dim3(1024), args, g_poison_bytes, stream) != cudaSuccess) {
    cudaGetLastError();
    g_poison_shared = false;
  }
}
}  // namespace

extern "C" {
cudaError_t __real_cudaMemcpy(void*, const void*, size_t, cudaMemcpyKind);
cudaError_t __real_cudaMemcpyAsync(void*, const void*, size_t, cudaMemcpyKind, cudaStream_t);
cudaError_t __real_cudaMemcpy2D(void*, size_t, const void*, size_t, size_t, size_t, cudaMemcpyKind);
cudaError_t __real_cudaMemcpy2DAsync(void*, size_t, const void*, size_t, size_t, size_t, cudaMemcpyKind,
                                     cudaStream_t);
cudaError_t __real_cudaMemcpyFromSymbol(void*, const void*, size_t, size_t, cudaMemcpyKind);
cudaError_t __real_cudaMemcpyFromSymbolAsync(void*, const void*, size_t, size_t, cudaMemcpyKind, cudaStream_t);

cudaError_t __wrap_cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
  count(dst, src, bytes, kind);
  return __real_cudaMemcpy(dst, src, bytes, kind);
}
cudaError_t __wrap_cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, cudaStream_t s) {
  count(dst, src, bytes, kind);
  check_stream("cudaMemcpyAsync", s);
  return __real_cudaMemcpyAsync(dst, src, bytes, kind, s);
}
cudaError_t __wrap_cudaMemcpy2D(void* dst, size_t dp, const void* src, size_t sp, size_t w, size_t h,
                                cudaMemcpyKind kind) {
  count(dst, src, w * h, kind);
  return __real_cudaMemcpy2D(dst, dp, src, sp, w, h, kind);
}
cudaError_t __wrap_cudaMemcpy2DAsync(void* dst, size_t dp, const void* src, size_t sp, size_t w, size_t h,
                                     cudaMemcpyKind kind, cudaStream_t s) {
  count(dst, src, w * h, kind);
  check_stream("cudaMemcpy2DAsync", s);
  return __real_cudaMemcpy2DAsync(dst, dp, src, sp, w, h, kind, s);
}
// A symbol is device memory: the copy goes to the host unless dst is the device's
// (whatever the kind says, as above).
cudaError_t __wrap_cudaMemcpyFromSymbol(void* dst, const void* sym, size_t bytes, size_t off, cudaMemcpyKind kind) {
  if (kind != cudaMemcpyDeviceToDevice || host_memory(dst)) d2h_add(bytes);
  return __real_cudaMemcpyFromSymbol(dst, sym, bytes, off, kind);
}
cudaError_t __wrap_cudaMemcpyFromSymbolAsync(void* dst, const void* sym, size_t bytes, size_t off,
                                             cudaMemcpyKind kind, cudaStream_t s) {
  if (kind != cudaMemcpyDeviceToDevice || host_memory(dst)) d2h_add(bytes);
  check_stream("cudaMemcpyFromSymbolAsync", s);
  return __real_cudaMemcpyFromSymbolAsync(dst, sym, bytes, off, kind, s);
}
cudaError_t __real_cudaMemcpy3D(const cudaMemcpy3DParms*);
cudaError_t __real_cudaMemcpy3DAsync(const cudaMemcpy3DParms*, cudaStream_t);
// A 3D copy reaches the host when its destination is host memory (not an array) and its
// source is an array or device memory, whatever its kind says. With an array the extent's
// width counts elements, not bytes.
static void count3d(const cudaMemcpy3DParms* p) {
  if (p == nullptr) return;
  const bool from_device = p->srcArray != nullptr || p->kind == cudaMemcpyDeviceToHost ||
                           (p->srcPtr.ptr != nullptr && device_memory(p->srcPtr.ptr));
  if (!from_device || p->dstArray != nullptr) return;
  if (p->kind != cudaMemcpyDeviceToHost && !host_memory(p->dstPtr.ptr)) return;
  std::size_t element = 1;
  if (p->srcArray != nullptr) {
    cudaChannelFormatDesc desc{};
    cudaExtent extent{};
    unsigned int flags = 0;
    if (cudaArrayGetInfo(&desc, &extent, &flags, p->srcArray) == cudaSuccess) {
      element = static_cast<std::size_t>((desc.x + desc.y + desc.z + desc.w + 7) / 8);
      if (element == 0) element = 1;
    } else {
      cudaGetLastError();
      element = 16;  // the widest element: count too much rather than too little
    }
  }
  d2h_add(element * p->extent.width * (p->extent.height ? p->extent.height : 1) *
          (p->extent.depth ? p->extent.depth : 1));
}
cudaError_t __wrap_cudaMemcpy3D(const cudaMemcpy3DParms* p) {
  count3d(p);
  return __real_cudaMemcpy3D(p);
}
cudaError_t __wrap_cudaMemcpy3DAsync(const cudaMemcpy3DParms* p, cudaStream_t s) {
  count3d(p);
  check_stream("cudaMemcpy3DAsync", s);
  return __real_cudaMemcpy3DAsync(p, s);
}
cudaError_t __wrap_cudaLaunchKernel(const void* func, dim3 grid, dim3 block, void** args, size_t shared,
                                    cudaStream_t s) {
  if (!launch_fits(func, block, shared)) return cudaErrorInvalidConfiguration;
  check_launch_stream(func, s);
  return __real_cudaLaunchKernel(func, grid, block, args, shared, s);
}
cudaError_t __real_cudaLaunchCooperativeKernel(const void*, dim3, dim3, void**, size_t, cudaStream_t);
cudaError_t __wrap_cudaLaunchCooperativeKernel(const void* func, dim3 grid, dim3 block, void** args, size_t shared,
                                               cudaStream_t s) {
  if (!launch_fits(func, block, shared)) return cudaErrorInvalidConfiguration;
  check_launch_stream(func, s);
  return __real_cudaLaunchCooperativeKernel(func, grid, block, args, shared, s);
}
cudaError_t __real_cudaLaunchKernelExC(const cudaLaunchConfig_t*, const void*, void**);
cudaError_t __wrap_cudaLaunchKernelExC(const cudaLaunchConfig_t* config, const void* func, void** args) {
  if (config != nullptr && !launch_fits(func, config->blockDim, config->dynamicSmemBytes)) {
    return cudaErrorInvalidConfiguration;
  }
  if (config != nullptr) check_launch_stream(func, config->stream);
  return __real_cudaLaunchKernelExC(config, func, args);
}
#if CUDART_VERSION >= 12040
// What <<<>>> calls (crt/host_runtime.h, unless the compiler defines
// __NV_LEGACY_LAUNCH, which goes through cudaLaunchKernel): the kernel as a
// cudaKernel_t, which cudaFuncGetAttributes and cudaFuncGetName accept (where
// a CUDA 12 runtime does not, static shared memory counts as 0). The CUDA 12.4
// and 12.9 headers call it as CUDA 13's do, and their libcudart exports it.
cudaError_t __real___cudaLaunchKernel(cudaKernel_t, dim3, dim3, void**, size_t, cudaStream_t);
cudaError_t __wrap___cudaLaunchKernel(cudaKernel_t k, dim3 grid, dim3 block, void** args, size_t shared,
                                      cudaStream_t s) {
  if (!launch_fits(reinterpret_cast<const void*>(k), block, shared)) return cudaErrorInvalidConfiguration;
  check_launch_stream(reinterpret_cast<const void*>(k), s);
  return __real___cudaLaunchKernel(k, grid, block, args, shared, s);
}
cudaError_t __real___cudaLaunchKernel_ptsz(cudaKernel_t, dim3, dim3, void**, size_t, cudaStream_t);
cudaError_t __wrap___cudaLaunchKernel_ptsz(cudaKernel_t k, dim3 grid, dim3 block, void** args, size_t shared,
                                           cudaStream_t s) {
  if (!launch_fits(reinterpret_cast<const void*>(k), block, shared)) return cudaErrorInvalidConfiguration;
  check_launch_stream(reinterpret_cast<const void*>(k), s);
  return __real___cudaLaunchKernel_ptsz(k, grid, block, args, shared, s);
}
#endif
// Device memory the student's code allocates: in a test program (the poison
// flag, as for shared memory) every new allocation starts filled with 0xA5
// bytes, as memory an earlier call freed can be on any GPU, not the zeros a
// fresh page holds. A kernel that reads scratch it never wrote (a counter not
// set to 0, a flag array not cleared) then fails its tests. CUDA never promises
// zeroed allocations, so correct code is not affected. The fill is ordered
// before anything the caller enqueues: on the allocation's stream for the
// stream-ordered allocators, and completed before cudaMalloc returns. A fill
// that fails leaves the memory as it is and the caller's call unchanged.
//
// The same wraps keep the student's code's live device allocations (made by
// cudaMalloc, cudaMallocAsync or cudaMallocFromPoolAsync during a call, not
// yet given to cudaFree or cudaFreeAsync), and every reply carries their count
// and bytes: the checker fails a test program whose exercise still holds more
// than a few of them after its tests (a leak grows with every call; a cache
// kept between calls stays put). cudaMallocPitch and cudaMalloc3D are not
// wrapped (no exercise uses them) and so not counted.
cudaError_t __real_cudaMalloc(void**, size_t);
cudaError_t __real_cudaMallocAsync(void**, size_t, cudaStream_t);
cudaError_t __real_cudaMallocFromPoolAsync(void**, size_t, cudaMemPool_t, cudaStream_t);
cudaError_t __real_cudaMemsetAsync(void*, int, size_t, cudaStream_t);
cudaError_t __real_cudaFree(void*);
cudaError_t __real_cudaFreeAsync(void*, cudaStream_t);
static bool poisons_allocations() { return g_poison_allocations && !g_infra; }
constexpr int kAllocationPoison = 0xA5;
static std::map<const void*, std::size_t> g_held;  // the student's live allocations: address -> bytes
static void hold(void* p, std::size_t bytes) {
  if (!g_infra && p != nullptr) g_held[p] = bytes;
}
static void release(const void* p) {
  if (!g_infra) g_held.erase(p);
}
cudaError_t __wrap_cudaMalloc(void** ptr, size_t bytes) {
  const cudaError_t e = __real_cudaMalloc(ptr, bytes);
  if (e == cudaSuccess && ptr != nullptr) hold(*ptr, bytes);
  if (e == cudaSuccess && bytes > 0 && ptr != nullptr && poisons_allocations()) {
    if (cudaMemset(*ptr, kAllocationPoison, bytes) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess)
      cudaGetLastError();
  }
  return e;
}
// The poison's memset is the runner's (__real_: neither counted nor checked for its stream).
cudaError_t __wrap_cudaMallocAsync(void** ptr, size_t bytes, cudaStream_t s) {
  check_stream("cudaMallocAsync", s);
  const cudaError_t e = __real_cudaMallocAsync(ptr, bytes, s);
  if (e == cudaSuccess && ptr != nullptr) hold(*ptr, bytes);
  if (e == cudaSuccess && bytes > 0 && ptr != nullptr && poisons_allocations() &&
      __real_cudaMemsetAsync(*ptr, kAllocationPoison, bytes, s) != cudaSuccess)
    cudaGetLastError();
  return e;
}
cudaError_t __wrap_cudaMallocFromPoolAsync(void** ptr, size_t bytes, cudaMemPool_t pool, cudaStream_t s) {
  check_stream("cudaMallocFromPoolAsync", s);
  const cudaError_t e = __real_cudaMallocFromPoolAsync(ptr, bytes, pool, s);
  if (e == cudaSuccess && ptr != nullptr) hold(*ptr, bytes);
  if (e == cudaSuccess && bytes > 0 && ptr != nullptr && poisons_allocations() &&
      __real_cudaMemsetAsync(*ptr, kAllocationPoison, bytes, s) != cudaSuccess)
    cudaGetLastError();
  return e;
}
cudaError_t __wrap_cudaFree(void* p) {
  const cudaError_t e = __real_cudaFree(p);
  if (e == cudaSuccess) release(p);
  return e;
}
cudaError_t __wrap_cudaFreeAsync(void* p, cudaStream_t s) {
  check_stream("cudaFreeAsync", s);
  const cudaError_t e = __real_cudaFreeAsync(p, s);
  if (e == cudaSuccess) release(p);
  return e;
}
cudaError_t __wrap_cudaMemsetAsync(void* p, int value, size_t bytes, cudaStream_t s) {
  check_stream("cudaMemsetAsync", s);
  return __real_cudaMemsetAsync(p, value, bytes, s);
}
cudaError_t __wrap_cudaMallocHost(void**, size_t) { return cudaErrorNotPermitted; }
cudaError_t __wrap_cudaHostAlloc(void**, size_t, unsigned int) { return cudaErrorNotPermitted; }
cudaError_t __wrap_cudaHostRegister(void*, size_t, unsigned int) { return cudaErrorNotPermitted; }
cudaError_t __wrap_cudaMallocManaged(void**, size_t, unsigned int) { return cudaErrorNotPermitted; }
// The device's limits as the student's code reads them. Under CUDALAB_DEVICE_PROFILE the
// launch check above holds every launch to the profile's limits; so the queries a student may
// size a launch from report that profile too, as cudalab::device_limits() does: the device's
// attributes (cudaDeviceGetAttribute), its properties (cudaGetDeviceProperties, CUDA 12's
// cudaGetDeviceProperties_v2) and the occupancy API. A kernel sized from
// cudaDevAttrMaxSharedMemoryPerBlockOptin then fits the profiled GPU, as it would fit the real
// one; without these it would read the H100's 227 KiB and be refused as if it had hard-coded
// them. Only the student's calls (not g_infra) on the profiled device; each value is the
// smaller of the real one and the profile's (cudalab::apply_profile), so a value read twice,
// or read by device_limits() and profiled again, stays the same.
static bool profiled_for(int device) { return g_profiled && !g_infra && device == g_limits.device; }
static int current_device() {
  int dev = -1;
  if (cudaGetDevice(&dev) != cudaSuccess) {
    cudaGetLastError();
    return -1;
  }
  return dev;
}
static int clamp_int(int real, long long limit) { return static_cast<int>(std::min<long long>(real, limit)); }
static void profile_attribute(int* value, cudaDeviceAttr attr) {
  const cudalab::DeviceLimits& l = g_limits;
  switch (attr) {
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = clamp_int(*value, static_cast<long long>(l.shared_per_block_optin)); break;
    case cudaDevAttrMaxSharedMemoryPerBlock: *value = clamp_int(*value, static_cast<long long>(l.shared_per_block)); break;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor: *value = clamp_int(*value, static_cast<long long>(l.shared_per_sm)); break;
    case cudaDevAttrMultiProcessorCount: *value = clamp_int(*value, l.sm_count); break;
    case cudaDevAttrMaxThreadsPerBlock: *value = clamp_int(*value, l.max_threads_per_block); break;
    case cudaDevAttrMaxThreadsPerMultiProcessor: *value = clamp_int(*value, l.max_threads_per_sm); break;
    case cudaDevAttrMaxBlocksPerMultiprocessor: *value = clamp_int(*value, l.max_blocks_per_sm); break;
    case cudaDevAttrMaxRegistersPerMultiprocessor: *value = clamp_int(*value, l.registers_per_sm); break;
    case cudaDevAttrL2CacheSize: *value = clamp_int(*value, static_cast<long long>(l.l2_bytes)); break;
    case cudaDevAttrComputeCapabilityMajor: *value = l.cc_major; break;
    case cudaDevAttrComputeCapabilityMinor: *value = l.cc_minor; break;
    default: break;
  }
}
// The occupancy API's answer `e`, `*blocks` resident blocks per SM, capped under the profile
// as cudalab::resident_blocks_per_sm caps them.
static cudaError_t occupancy_answer(cudaError_t e, int* blocks, const void* func, int threads, size_t dynamic_shared) {
  if (e != cudaSuccess || blocks == nullptr || !profiled_for(current_device())) return e;
  const cudalab::DeviceLimits& l = g_limits;
  long long n = std::min(*blocks, l.max_blocks_per_sm);
  if (threads > 0) n = std::min<long long>(n, l.max_threads_per_sm / threads);
  const std::size_t per_block = static_shared_bytes(func) + dynamic_shared;
  if (per_block > 0) n = std::min<long long>(n, static_cast<long long>(l.shared_per_sm / per_block));
  *blocks = static_cast<int>(std::max(n, 0LL));
  return e;
}
#define CUDALAB_WRAP_NAME2(name) __wrap_##name
#define CUDALAB_WRAP_NAME(name) CUDALAB_WRAP_NAME2(name)  // expands CUDA 12's macro first
#define CUDALAB_REAL_NAME2(name) __real_##name
#define CUDALAB_REAL_NAME(name) CUDALAB_REAL_NAME2(name)
cudaError_t __real_cudaDeviceGetAttribute(int*, cudaDeviceAttr, int);
cudaError_t __wrap_cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  const cudaError_t e = __real_cudaDeviceGetAttribute(value, attr, device);
  if (e == cudaSuccess && value != nullptr && profiled_for(device)) profile_attribute(value, attr);
  return e;
}
cudaError_t CUDALAB_REAL_NAME(cudaGetDeviceProperties)(cudaDeviceProp*, int);
cudaError_t CUDALAB_WRAP_NAME(cudaGetDeviceProperties)(cudaDeviceProp* prop, int device) {
  const cudaError_t e = CUDALAB_REAL_NAME(cudaGetDeviceProperties)(prop, device);
  if (e != cudaSuccess || prop == nullptr || !profiled_for(device)) return e;
  const cudalab::DeviceLimits& l = g_limits;
  prop->sharedMemPerBlockOptin = std::min(prop->sharedMemPerBlockOptin, l.shared_per_block_optin);
  prop->sharedMemPerBlock = std::min(prop->sharedMemPerBlock, l.shared_per_block);
  prop->sharedMemPerMultiprocessor = std::min(prop->sharedMemPerMultiprocessor, l.shared_per_sm);
  prop->multiProcessorCount = clamp_int(prop->multiProcessorCount, l.sm_count);
  prop->maxThreadsPerBlock = clamp_int(prop->maxThreadsPerBlock, l.max_threads_per_block);
  prop->maxThreadsPerMultiProcessor = clamp_int(prop->maxThreadsPerMultiProcessor, l.max_threads_per_sm);
  prop->maxBlocksPerMultiProcessor = clamp_int(prop->maxBlocksPerMultiProcessor, l.max_blocks_per_sm);
  prop->regsPerMultiprocessor = clamp_int(prop->regsPerMultiprocessor, l.registers_per_sm);
  prop->l2CacheSize = clamp_int(prop->l2CacheSize, static_cast<long long>(l.l2_bytes));
  prop->totalGlobalMem = std::min(prop->totalGlobalMem, l.global_bytes);
  prop->major = l.cc_major;
  prop->minor = l.cc_minor;
  return e;
}
cudaError_t __real_cudaOccupancyMaxActiveBlocksPerMultiprocessor(int*, const void*, int, size_t);
cudaError_t __wrap_cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, const void* func, int threads,
                                                                 size_t dynamic_shared) {
  return occupancy_answer(__real_cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, func, threads, dynamic_shared),
                          blocks, func, threads, dynamic_shared);
}
cudaError_t __real_cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int*, const void*, int, size_t,
                                                                          unsigned int);
cudaError_t __wrap_cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* blocks, const void* func, int threads,
                                                                          size_t dynamic_shared, unsigned int flags) {
  return occupancy_answer(
      __real_cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(blocks, func, threads, dynamic_shared, flags),
      blocks, func, threads, dynamic_shared);
}
cudaError_t __real_cudaOccupancyAvailableDynamicSMemPerBlock(size_t*, const void*, int, int);
cudaError_t __wrap_cudaOccupancyAvailableDynamicSMemPerBlock(size_t* bytes, const void* func, int blocks,
                                                             int threads) {
  const cudaError_t e = __real_cudaOccupancyAvailableDynamicSMemPerBlock(bytes, func, blocks, threads);
  if (e == cudaSuccess && bytes != nullptr && profiled_for(current_device())) {
    const std::size_t fixed = static_shared_bytes(func);
    const cudalab::DeviceLimits& l = g_limits;
    const std::size_t optin = l.shared_per_block_optin > fixed ? l.shared_per_block_optin - fixed : 0;
    const std::size_t per_sm = blocks > 0 ? l.shared_per_sm / static_cast<std::size_t>(blocks) : l.shared_per_sm;
    const std::size_t sm_left = per_sm > fixed ? per_sm - fixed : 0;
    *bytes = std::min({*bytes, optin, sm_left});
  }
  return e;
}
cudaError_t __real_cudaGetDriverEntryPoint(const char*, void**, unsigned long long, cudaDriverEntryPointQueryResult*);
cudaError_t __wrap_cudaGetDriverEntryPoint(const char* sym, void** fn, unsigned long long flags,
                                           cudaDriverEntryPointQueryResult* status) {
  if (!g_infra) return cudaErrorNotPermitted;  // the driver API would bypass the guard
  return __real_cudaGetDriverEntryPoint(sym, fn, flags, status);
}
#if CUDART_VERSION >= 12050
cudaError_t __real_cudaGetDriverEntryPointByVersion(const char*, void**, unsigned int, unsigned long long,
                                                    cudaDriverEntryPointQueryResult*);
cudaError_t __wrap_cudaGetDriverEntryPointByVersion(const char* sym, void** fn, unsigned int version,
                                                    unsigned long long flags,
                                                    cudaDriverEntryPointQueryResult* status) {
  if (!g_infra) return cudaErrorNotPermitted;
  return __real_cudaGetDriverEntryPointByVersion(sym, fn, version, flags, status);
}
#endif
}  // extern "C"

namespace cudalab::remote {

void register_exercise();  // the exercise's functions (remote_serve.cu)

namespace {

std::map<std::string, Handler>& handlers() {
  static std::map<std::string, Handler> h;
  return h;
}

struct Mapping {
  CUdeviceptr va;
  std::size_t size;
};

bool reply(int sock, wire::Status status, const std::string& type, const std::string& what,
           const Bytes& result = {}, std::size_t result_bytes = 0) {
  Writer w;
  w.put(static_cast<std::uint32_t>(status));
  w.put(static_cast<std::uint64_t>(d2h_bytes()));
  std::size_t held_bytes = 0;
  for (const auto& [p, bytes] : g_held) held_bytes += bytes;
  w.put(static_cast<std::uint64_t>(g_held.size()));  // the student's live allocations, after the call
  w.put(static_cast<std::uint64_t>(held_bytes));
  w.put(static_cast<std::uint64_t>(type.size()));
  w.put_raw(type.data(), type.size());
  w.put(static_cast<std::uint64_t>(what.size()));
  w.put_raw(what.data(), what.size());
  w.put(static_cast<std::uint64_t>(result_bytes));
  w.put_raw(result.data(), result_bytes);
  const std::size_t n = w.size();
  Bytes b = w.take();
  return wire::send_message(sock, wire::kReply, b.data(), n);
}

bool ready(int sock, bool ok, const std::string& why, CUdeviceptr base = 0) {
  Writer w;
  w.put(static_cast<std::uint32_t>(ok ? 1 : 0));
  w.put(static_cast<std::uint64_t>(why.size()));
  w.put_raw(why.data(), why.size());
  w.put(static_cast<std::uint64_t>(base));
  const std::size_t n = w.size();
  Bytes b = w.take();
  return wire::send_message(sock, wire::kReady, b.data(), n);
}

// Diagnostics: with CUDALAB_RUNNER_TRACE set, each call's phases on the
// runner's stderr (its log, in a grading), in microseconds: the mapping of
// the buffers it reaches, its host code (the launches), the wait for its work
// (cudaDeviceSynchronize) and the unmapping. They show where a round trip's
// time goes (docs/results/h100-51e84f4.md: 100 us of mapping and 55 of
// unmapping around a 7 us call of 7.2). The runner is the student's process:
// nothing the grader decides reads them; the checker times calls from outside.
struct CallTrace {
  using Clock = std::chrono::steady_clock;
  static constexpr int kMost = 1000;  // calls traced, at most
  bool on = std::getenv("CUDALAB_RUNNER_TRACE") != nullptr;
  int printed = 0;
  Clock::time_point map0{}, map1{}, call0{}, call1{}, sync1{};
  static double us(Clock::time_point a, Clock::time_point b) {
    return std::chrono::duration<double, std::micro>(b - a).count();
  }
  // After the unmapping of a call (`key`) that had `buffers` buffers mapped.
  void print(const std::string& key, std::size_t buffers) {
    if (!on || printed >= kMost) return;
    ++printed;
    const auto end = Clock::now();
    const double map = map0 == Clock::time_point{} ? 0.0 : us(map0, map1);
    std::fprintf(stderr, "cudalab runner trace: %s map %.1f (%zu buffers) call %.1f sync %.1f unmap %.1f\n",
                 key.substr(0, key.find('|')).c_str(), map, buffers, us(call0, call1), us(call1, sync1),
                 us(sync1, end));
    map0 = map1 = Clock::time_point{};
  }
};

int serve_loop(int sock, CUdeviceptr base, std::size_t size) {
  wire::Driver drv;
  int device = 0;
  try {
    if (size == 0) throw std::length_error("");  // no GPU in the checker: no memory to share
    CUDALAB_CHECK(cudaFree(nullptr));
    CUDALAB_CHECK(cudaGetDevice(&device));
    drv.load();
    CUdeviceptr got = 0;
    drv.check(drv.reserve(&got, size, 0, base, 0), "reserving the checker's address range");
    if (base == 0) {
      base = got;  // a proposal: the checker reserves the same range if it can
    } else if (got != base) {
      drv.unreserve(got, size);
      throw std::runtime_error("the checker's address range is taken in the runner");
    }
  } catch (const std::length_error&) {
    // Serve calls that reach no device memory (argument checks).
  } catch (const std::exception& e) {
    ready(sock, false, e.what());
    return 3;
  }
  if (size != 0 && !cudalab::device_profile_env().empty()) {
    try {  // the launch check's limits (an unknown profile: the checker says which are known)
      g_limits = cudalab::device_limits();
      g_profiled = true;
    } catch (const std::exception& e) {
      ready(sock, false, e.what());
      return 3;
    }
  }
  if (size != 0) {
    // Work that the student's static initializers left on the GPU (a kernel that keeps
    // the GPU busy while the benchmark times the baseline in the checker) ends before
    // the runner is ready; from then on the student's code runs only inside a call,
    // and each call ends with the device synchronized.
    const cudaError_t err = cudaDeviceSynchronize();
    if (err != cudaSuccess) {
      ready(sock, false, std::string("the exercise's code left a CUDA error before the first call: ") +
                             cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")");
      return 3;
    }
  }
  if (size != 0 && g_poison_shared) setup_poison();
  g_infra = false;  // from here on, only the student's code calls the CUDA runtime
  if (!ready(sock, true, "", base)) return 1;
  cudaStream_t stream = nullptr;
  if (size != 0 && cudaStreamCreate(&stream) != cudaSuccess) return 3;
  std::vector<Mapping> mapped;
  bool kept = false;  // `mapped` left in place after the last call (wire::kKeepMapped)
  const auto unmap_all = [&] {
    for (const Mapping& m : mapped) drv.unmap(m.va, m.size);
    mapped.clear();
    kept = false;
  };
  CallTrace trace;
  const CUmemAccessDesc access = wire::access_desc(device);
  // Until then, the next request is busy-polled for (the checker's kSpinAfter on a
  // timed round trip, remote_spin.hpp); then, and otherwise, the wait blocks.
  using SpinClock = std::chrono::steady_clock;
  SpinClock::time_point awake_until{};
  for (;;) {
    wire::Header h{};
    Bytes payload;
    std::vector<int> fds;
    const auto now = SpinClock::now();
    if (now < awake_until) spin::poll_readable(sock, awake_until - now);
    if (!wire::recv_message(sock, &h, &payload, &fds)) return 0;  // the checker is done
    if (h.kind == wire::kMap) {
      if (trace.on) trace.map0 = CallTrace::Clock::now();
      if (kept) unmap_all();  // the buffers of the calls before: this call sends its own
      const std::size_t pairs = h.bytes / 16;
      for (std::size_t i = 0; i < pairs && i < fds.size(); ++i) {
        const CUdeviceptr va = payload[2 * i];
        const std::size_t bytes = payload[2 * i + 1];
        CUmemGenericAllocationHandle handle = 0;
        CUresult r = drv.import_handle(&handle, reinterpret_cast<void*>(static_cast<std::uintptr_t>(fds[i])),
                                       CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
        if (r == CUDA_SUCCESS) {
          r = drv.map(va, bytes, 0, handle, 0);
          drv.release(handle);  // the mapping keeps the memory
        }
        if (r == CUDA_SUCCESS) r = drv.set_access(va, bytes, &access, 1);
        if (r != CUDA_SUCCESS) {
          reply(sock, wire::kBadRequest, "", "mapping a buffer in the runner failed: " + drv.name(r));
          return 3;
        }
        mapped.push_back({va, bytes});
      }
      for (int fd : fds) close(fd);
      if (trace.on) trace.map1 = CallTrace::Clock::now();
      // Its kCall follows: a window already running runs on, a flag opens one.
      if ((h.flags & wire::kSpinAfter) != 0) awake_until = SpinClock::now() + spin::kWindow;
      continue;
    }
    for (int fd : fds) close(fd);
    if (h.kind != wire::kCall) return 3;
    Reader r(payload.data(), h.bytes);
    std::string key;
    std::size_t arg_bytes = 0;
    const char* args = nullptr;
    try {
      const auto key_len = r.get<std::uint64_t>();
      key.assign(r.get_raw(key_len), key_len);
      arg_bytes = r.get<std::uint64_t>();
      args = r.get_raw(arg_bytes);
    } catch (const std::exception& e) {
      reply(sock, wire::kBadRequest, "", e.what());
      return 3;
    }
    auto it = handlers().find(key);
    if (it == handlers().end()) {
      reply(sock, wire::kBadRequest, "", "the runner has no function " + key);
      return 3;
    }
    Bytes arg_words((arg_bytes + 15) / 16 * 2, 0);
    std::memcpy(arg_words.data(), args, arg_bytes);
    Reader ar(arg_words.data(), arg_bytes);
    Bytes result;
    std::size_t result_bytes = 0;
    wire::Status status = wire::kOk;
    std::string type, what;
    if (trace.on) trace.call0 = CallTrace::Clock::now();
    d2h_set(0, false);
    g_refused.clear();
    g_refused_type = "";
    cudalab::remote::stream_given() = false;
    if (g_poison_shared && stream != nullptr && key != cudalab::remote::kNullCall) poison_shared(stream);
    try {
      result = it->second(ar, stream, &result_bytes);
    } catch (const cudalab::CudaError& e) {
      status = wire::kThrew, type = "cudalab::CudaError", what = e.what();
    } catch (const cudalab::DeviceLimitError& e) {
      status = wire::kThrew, type = "cudalab::DeviceLimitError", what = e.what();
    } catch (const std::invalid_argument& e) {
      status = wire::kThrew, type = "std::invalid_argument", what = e.what();
    } catch (const std::out_of_range& e) {
      status = wire::kThrew, type = "std::out_of_range", what = e.what();
    } catch (const std::length_error& e) {
      status = wire::kThrew, type = "std::length_error", what = e.what();
    } catch (const std::domain_error& e) {
      status = wire::kThrew, type = "std::domain_error", what = e.what();
    } catch (const std::logic_error& e) {
      status = wire::kThrew, type = "std::logic_error", what = e.what();
    } catch (const std::overflow_error& e) {
      status = wire::kThrew, type = "std::overflow_error", what = e.what();
    } catch (const std::underflow_error& e) {
      status = wire::kThrew, type = "std::underflow_error", what = e.what();
    } catch (const std::range_error& e) {
      status = wire::kThrew, type = "std::range_error", what = e.what();
    } catch (const std::bad_alloc&) {
      status = wire::kThrew, type = "std::bad_alloc", what = "";
    } catch (const std::exception& e) {
      status = wire::kThrew, type = "std::exception", what = e.what();
    } catch (...) {
      status = wire::kThrew, type = "an exception of an unknown type", what = "";
    }
    if (trace.on) trace.call1 = CallTrace::Clock::now();
    const cudaError_t err = size != 0 ? cudaDeviceSynchronize() : cudaSuccess;
    if (trace.on) trace.sync1 = CallTrace::Clock::now();
    const std::size_t buffers = mapped.size();
    if ((h.flags & wire::kKeepMapped) != 0 && err == cudaSuccess) {
      kept = true;  // the checker's next round trip says whether they serve again
    } else {
      unmap_all();
    }
    trace.print(key, buffers);
    if (err != cudaSuccess) {
      reply(sock, wire::kCudaFault, "", std::string(cudaGetErrorName(err)) + " (" + cudaGetErrorString(err) + ")");
      return 2;  // the context is unusable: the checker starts a new runner
    }
    if (!g_refused.empty()) {  // a breach of the contract (the launch and stream checks): the call fails
      status = wire::kThrew, type = g_refused_type, what = g_refused;
      result_bytes = 0;
    }
    if (!reply(sock, status, type, what, result, result_bytes)) return 1;
    // A timed null call's reply: the next request comes at once. Any other: block.
    awake_until = (h.flags & wire::kSpinAfter) != 0 ? SpinClock::now() + spin::kWindow : SpinClock::time_point{};
  }
}

}  // namespace

void add_handler(const std::string& key, Handler h) { handlers()[key] = std::move(h); }

int run_server(int sock, CUdeviceptr base, std::size_t size) { return serve_loop(sock, base, size); }

}  // namespace cudalab::remote

namespace {
// The null call's one launch: an empty kernel.
__global__ void null_call_kernel() {}
}  // namespace

int main(int argc, char** argv) {
  int sock = -1;
  unsigned long long base = 0, size = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--cudalab-poison-shared") g_poison_shared = g_poison_allocations = true;
    else if (i + 1 == argc) break;
    else if (a == "--cudalab-runner-fd") sock = std::atoi(argv[++i]);
    else if (a == "--cudalab-address-range") std::sscanf(argv[++i], "%llu:%llu", &base, &size);
  }
  if (sock < 0) {
    std::fprintf(stderr,
                 "%s holds an exercise's code for its test program, which starts it; run the test "
                 "program (the same name with _test_ for _runner_) instead.\n",
                 argc > 0 ? argv[0] : "runner");
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  d2h_lock(true);  // the count read-only from here on (the student's static initializers ran before)
  // The null call: the same way through the socket, the mappings, one
  // kernel launch and the synchronization as an exercise's call, without the
  // exercise's work. A benchmark's checker times one before each timed call
  // and subtracts it (cudalab_remote_call_times in remote_checker.cu), so what
  // remains is the exercise's kernels and the gaps between them, as CUDA
  // events around a launch in one process would measure.
  cudalab::remote::add_handler(cudalab::remote::kNullCall,
                               [](cudalab::remote::Reader&, cudaStream_t stream, std::size_t* bytes) {
                                 if (stream != nullptr) {  // a runner without device memory has no stream
                                   null_call_kernel<<<1, 1, 0, stream>>>();
                                   CUDALAB_CHECK(cudaGetLastError());
                                 }
                                 *bytes = 0;
                                 return cudalab::remote::Bytes{};
                               });
  cudalab::remote::register_exercise();
  return cudalab::remote::run_server(sock, static_cast<CUdeviceptr>(base), static_cast<std::size_t>(size));
}
