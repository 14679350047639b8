/// @file device.cuh
/// @brief The one place the course reads the limits of the GPU it runs on,
///        and the device profiles that make a big GPU stand in for a small one.
///
/// cudalab::device_limits() reads the current device's limits (shared memory
/// per block and per SM, resident threads and blocks per SM, SMs, L2, global
/// memory, registers, warp size, compute capability) with
/// `cudaDeviceGetAttribute`. When the environment variable
/// `CUDALAB_DEVICE_PROFILE` names one of the GPUs students own
/// (`t4`, `a100`, `rtx3090`, `rtx4090`, `l4`, `rtx5090`, `h100`, `b200`;
/// cudalab::device_profiles), each limit is the smaller of that GPU's and the
/// real device's: an H100 that runs under `CUDALAB_DEVICE_PROFILE=t4` reports
/// 40 SMs and 64 KiB of opt-in shared memory per block, and a launch sized
/// from those limits fits a T4. A profile never reports more than the real
/// device has. The test runner refuses, under a profile, any launch that asks
/// for more than the profile allows, and answers the exercise's own device
/// queries (`cudaDeviceGetAttribute`, `cudaGetDeviceProperties`, the occupancy
/// API) with the profile's limits too, so a launch sized from those fits as
/// well (tests/common/remote_runner.cu).
///
/// The profiles' figures are those of the CUDA C++ Programming Guide, table
/// "Technical Specifications per Compute Capability" (shared memory per SM and
/// per block, resident threads and blocks per SM, registers), and of NVIDIA's
/// product pages for the SM count, L2 size and memory of each board.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "cudalab/error.cuh"

namespace cudalab {

/// @brief `CUDALAB_DEVICE_PROFILE` names no known GPU; what() lists the
///        valid names.
class DeviceProfileError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

/// @brief A launch asks for more than the (profiled) device allows: more
///        shared memory per block than its opt-in limit, or more threads per
///        block. Thrown by cudalab::set_dynamic_shared and
///        cudalab::check_launch_fits before anything is launched.
class DeviceLimitError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// @brief The limits of one device as the course sees them: the real
///        device's, or under a profile the smaller of the profile's and the
///        real device's, field by field. Bytes are bytes (not KiB).
struct DeviceLimits {
  int device = 0;                          ///< the CUDA device ordinal (-1 for a profile's table row)
  char profile[16] = {};                   ///< the profile applied, empty when none
  int cc_major = 0;                        ///< compute capability, major (under a profile: the smaller capability)
  int cc_minor = 0;                        ///< compute capability, minor
  int sm_count = 0;                        ///< streaming multiprocessors
  int max_threads_per_block = 0;           ///< threads per block (1024 on every GPU here)
  int max_threads_per_sm = 0;              ///< resident threads per SM
  int max_blocks_per_sm = 0;               ///< resident blocks per SM
  int registers_per_sm = 0;                ///< 32-bit registers per SM
  int warp_size = 0;                       ///< threads per warp
  std::size_t shared_per_block = 0;        ///< shared memory per block without opting in (48 KiB)
  std::size_t shared_per_block_optin = 0;  ///< shared memory per block with cudaFuncAttributeMaxDynamicSharedMemorySize
  std::size_t shared_per_sm = 0;           ///< shared memory per SM, all resident blocks together
  std::size_t l2_bytes = 0;                ///< L2 cache
  std::size_t global_bytes = 0;            ///< global memory
};

/// @brief One GPU students own: its name for `CUDALAB_DEVICE_PROFILE` and its
///        limits (DeviceLimits::device is -1).
struct DeviceProfile {
  const char* name;     ///< `t4`, `a100`, ...
  const char* board;    ///< the product, for messages: "NVIDIA T4"
  DeviceLimits limits;  ///< the board's limits
};

namespace detail {
constexpr std::size_t kKiB = 1024, kMiB = 1024 * kKiB, kGiB = 1024 * kMiB;
/// One row of the profile table (see device_profiles()).
inline DeviceLimits profile_row(int cc_major, int cc_minor, int sms, int threads_per_sm, int blocks_per_sm,
                                std::size_t optin_kib, std::size_t per_sm_kib, std::size_t l2,
                                std::size_t global) {
  DeviceLimits l;
  l.device = -1;
  l.cc_major = cc_major;
  l.cc_minor = cc_minor;
  l.sm_count = sms;
  l.max_threads_per_block = 1024;
  l.max_threads_per_sm = threads_per_sm;
  l.max_blocks_per_sm = blocks_per_sm;
  l.registers_per_sm = 64 * 1024;
  l.warp_size = 32;
  l.shared_per_block = 48 * kKiB;
  l.shared_per_block_optin = optin_kib * kKiB;
  l.shared_per_sm = per_sm_kib * kKiB;
  l.l2_bytes = l2;
  l.global_bytes = global;
  return l;
}
}  // namespace detail

/// @brief The GPUs students own, smallest shared memory first.
///
/// | name | board | cc | SMs | opt-in smem/block | smem/SM | threads/SM | blocks/SM | L2 | memory |
/// | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
/// | `t4` | T4 | 7.5 | 40 | 64 KiB | 64 KiB | 1024 | 16 | 4 MiB | 16 GiB |
/// | `rtx3090` | GeForce RTX 3090 | 8.6 | 82 | 99 KiB | 100 KiB | 1536 | 16 | 6 MiB | 24 GiB |
/// | `rtx4090` | GeForce RTX 4090 | 8.9 | 128 | 99 KiB | 100 KiB | 1536 | 24 | 72 MiB | 24 GiB |
/// | `l4` | L4 | 8.9 | 58 | 99 KiB | 100 KiB | 1536 | 24 | 48 MiB | 24 GiB |
/// | `rtx5090` | GeForce RTX 5090 | 12.0 | 170 | 99 KiB | 100 KiB | 1536 | 24 | 96 MiB | 32 GiB |
/// | `a100` | A100 40GB | 8.0 | 108 | 163 KiB | 164 KiB | 2048 | 32 | 40 MiB | 40 GiB |
/// | `h100` | H100 SXM5 80GB | 9.0 | 132 | 227 KiB | 228 KiB | 2048 | 32 | 50 MiB | 80 GiB |
/// | `b200` | B200 | 10.0 | 148 | 227 KiB | 228 KiB | 2048 | 32 | 126 MiB | 180 GiB |
///
/// Every board: 1024 threads per block, 48 KiB of shared memory per block
/// without opting in, 64 Ki registers per SM, warps of 32. Source: NVIDIA,
/// CUDA C++ Programming Guide, "Technical Specifications per Compute
/// Capability" (per-SM and per-block limits); the boards' data sheets (SMs,
/// L2, memory; memory in GiB as the boards are sold, a little above what
/// the device reports, which the minimum with the real device absorbs).
/// @return the table, a static array of 8 profiles.
inline const std::vector<DeviceProfile>& device_profiles() {
  using detail::kGiB;
  using detail::kMiB;
  using detail::profile_row;
  static const std::vector<DeviceProfile> table = {
      {"t4", "NVIDIA T4", profile_row(7, 5, 40, 1024, 16, 64, 64, 4 * kMiB, 16 * kGiB)},
      {"rtx3090", "NVIDIA GeForce RTX 3090", profile_row(8, 6, 82, 1536, 16, 99, 100, 6 * kMiB, 24 * kGiB)},
      {"rtx4090", "NVIDIA GeForce RTX 4090", profile_row(8, 9, 128, 1536, 24, 99, 100, 72 * kMiB, 24 * kGiB)},
      {"l4", "NVIDIA L4", profile_row(8, 9, 58, 1536, 24, 99, 100, 48 * kMiB, 24 * kGiB)},
      {"rtx5090", "NVIDIA GeForce RTX 5090", profile_row(12, 0, 170, 1536, 24, 99, 100, 96 * kMiB, 32 * kGiB)},
      {"a100", "NVIDIA A100 40GB", profile_row(8, 0, 108, 2048, 32, 163, 164, 40 * kMiB, 40 * kGiB)},
      {"h100", "NVIDIA H100 SXM5 80GB", profile_row(9, 0, 132, 2048, 32, 227, 228, 50 * kMiB, 80 * kGiB)},
      {"b200", "NVIDIA B200", profile_row(10, 0, 148, 2048, 32, 227, 228, 126 * kMiB, 180 * kGiB)},
  };
  return table;
}

/// @return the valid profile names, comma-separated ("t4, rtx3090, ...").
inline std::string device_profile_names() {
  std::string s;
  for (const DeviceProfile& p : device_profiles()) s += (s.empty() ? "" : ", ") + std::string(p.name);
  return s;
}

/// @brief The profile called `name` (exact, lower case).
/// @throws DeviceProfileError when no profile has that name; what() names
///         the valid ones.
/// Complexity: O(number of profiles). Host only, needs no GPU.
inline const DeviceProfile& device_profile(std::string_view name) {
  for (const DeviceProfile& p : device_profiles()) {
    if (name == p.name) return p;
  }
  throw DeviceProfileError("CUDALAB_DEVICE_PROFILE=" + std::string(name) +
                           " is no known GPU; the valid profiles are " + device_profile_names());
}

/// @brief The limits `real` would have under `profile`: each field the
///        smaller of the two (the compute capability: the smaller one), so
///        never more than the real device has. DeviceLimits::device stays
///        `real`'s; DeviceLimits::profile becomes the profile's name.
/// Host only, needs no GPU.
inline DeviceLimits apply_profile(const DeviceLimits& real, const DeviceProfile& profile) {
  const DeviceLimits& p = profile.limits;
  DeviceLimits l = real;
  std::strncpy(l.profile, profile.name, sizeof(l.profile) - 1);
  if (p.cc_major * 10 + p.cc_minor < real.cc_major * 10 + real.cc_minor) {
    l.cc_major = p.cc_major;
    l.cc_minor = p.cc_minor;
  }
  l.sm_count = std::min(real.sm_count, p.sm_count);
  l.max_threads_per_block = std::min(real.max_threads_per_block, p.max_threads_per_block);
  l.max_threads_per_sm = std::min(real.max_threads_per_sm, p.max_threads_per_sm);
  l.max_blocks_per_sm = std::min(real.max_blocks_per_sm, p.max_blocks_per_sm);
  l.registers_per_sm = std::min(real.registers_per_sm, p.registers_per_sm);
  l.warp_size = std::min(real.warp_size, p.warp_size);
  l.shared_per_block = std::min(real.shared_per_block, p.shared_per_block);
  l.shared_per_block_optin = std::min(real.shared_per_block_optin, p.shared_per_block_optin);
  l.shared_per_sm = std::min(real.shared_per_sm, p.shared_per_sm);
  l.l2_bytes = std::min(real.l2_bytes, p.l2_bytes);
  l.global_bytes = std::min(real.global_bytes, p.global_bytes);
  return l;
}

/// @return the value of `CUDALAB_DEVICE_PROFILE`, empty when unset or empty.
inline std::string device_profile_env() {
  const char* v = std::getenv("CUDALAB_DEVICE_PROFILE");
  return v == nullptr ? std::string() : std::string(v);
}

/// @brief The real limits of device `device`, from `cudaDeviceGetAttribute`
///        (and `cudaMemGetInfo` for the memory), no profile applied.
/// @throws CudaError when the device does not exist or a query fails.
/// Cost: about 15 attribute queries; cudalab::device_limits() caches them.
inline DeviceLimits real_device_limits(int device) {
  DeviceLimits l;
  l.device = device;
  const auto get = [device](cudaDeviceAttr attr) {
    int v = 0;
    CUDALAB_CHECK(cudaDeviceGetAttribute(&v, attr, device));
    return v;
  };
  l.cc_major = get(cudaDevAttrComputeCapabilityMajor);
  l.cc_minor = get(cudaDevAttrComputeCapabilityMinor);
  l.sm_count = get(cudaDevAttrMultiProcessorCount);
  l.max_threads_per_block = get(cudaDevAttrMaxThreadsPerBlock);
  l.max_threads_per_sm = get(cudaDevAttrMaxThreadsPerMultiProcessor);
  l.max_blocks_per_sm = get(cudaDevAttrMaxBlocksPerMultiprocessor);
  l.registers_per_sm = get(cudaDevAttrMaxRegistersPerMultiprocessor);
  l.warp_size = get(cudaDevAttrWarpSize);
  l.shared_per_block = static_cast<std::size_t>(get(cudaDevAttrMaxSharedMemoryPerBlock));
  l.shared_per_block_optin = static_cast<std::size_t>(get(cudaDevAttrMaxSharedMemoryPerBlockOptin));
  l.shared_per_sm = static_cast<std::size_t>(get(cudaDevAttrMaxSharedMemoryPerMultiprocessor));
  l.l2_bytes = static_cast<std::size_t>(get(cudaDevAttrL2CacheSize));
  int current = 0;
  CUDALAB_CHECK(cudaGetDevice(&current));
  if (current == device) {
    std::size_t free_bytes = 0, total = 0;
    CUDALAB_CHECK(cudaMemGetInfo(&free_bytes, &total));
    l.global_bytes = total;
  } else {
    cudaDeviceProp prop{};
    CUDALAB_CHECK(cudaGetDeviceProperties(&prop, device));
    l.global_bytes = prop.totalGlobalMem;
  }
  return l;
}

/// @brief The limits of device `device` under the profile `profile` (empty:
///        none): real_device_limits() with apply_profile().
/// @throws DeviceProfileError for an unknown profile name (before any CUDA call).
/// @throws CudaError as real_device_limits().
inline DeviceLimits device_limits_for(int device, std::string_view profile) {
  if (profile.empty()) return real_device_limits(device);
  const DeviceProfile& p = device_profile(profile);
  return apply_profile(real_device_limits(device), p);
}

/// @brief The limits of the current device under `CUDALAB_DEVICE_PROFILE`
///        (none when unset): what every launch of the course is sized from.
///        Cached per device and profile name, so a call costs a lock and a
///        `getenv` after the first. Compiled once, in chapters/common/device_limits.cu,
///        not inline: an exercise's object calls it and holds no `getenv` or lock
///        of its own (the grader allows an exercise no environment or thread API).
/// @throws DeviceProfileError when `CUDALAB_DEVICE_PROFILE` names no profile.
/// @throws CudaError when there is no device.
DeviceLimits device_limits();

/// @return the real (never profiled) limits of the current device, cached:
///         for the few figures that must be the hardware's, such as the
///         size of the buffer that flushes the L2 before a timed run.
///         Compiled in chapters/common/device_limits.cu, as device_limits().
/// @throws CudaError when there is no device.
DeviceLimits real_device_limits();

/// @return the number of usable CUDA devices; 0 when there is no device or no
///         driver (never throws: this is how the harness decides to skip).
inline int device_count() noexcept {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the error so later calls do not see it
    return 0;
  }
  return count;
}

/// @return the properties of the current device, for its name and the
///         driver's view of it; its limits come from cudalab::device_limits().
/// @throws CudaError when there is no device.
inline cudaDeviceProp current_device_properties() {
  int dev = 0;
  CUDALAB_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp prop{};
  CUDALAB_CHECK(cudaGetDeviceProperties(&prop, dev));
  return prop;
}

/// @return the number of streaming multiprocessors of the current device
///         (under `CUDALAB_DEVICE_PROFILE`, the profile's when smaller):
///         device_limits().sm_count.
/// @throws CudaError when there is no device.
inline int sm_count() { return device_limits().sm_count; }

/// @brief Checks that a block of `threads` threads with `static_shared` +
///        `dynamic_shared` bytes of shared memory fits `limits`.
/// @throws DeviceLimitError naming `what`, the request and the limit (and
///         the profile, if any) when it does not.
/// Host only, needs no GPU.
inline void check_launch_fits(const DeviceLimits& limits, const char* what, unsigned long long threads,
                              std::size_t static_shared, std::size_t dynamic_shared) {
  const std::string where = limits.profile[0] != '\0'
                                ? std::string(" under CUDALAB_DEVICE_PROFILE=") + limits.profile
                                : std::string(" on this device");
  if (static_shared + dynamic_shared > limits.shared_per_block_optin) {
    // Where the kernel has static __shared__ memory, that is what the tile's sizing missed
    // (1.12's given launcher gives the whole limit to its dynamic bins). Under a profile the
    // device's attributes answer as the profile, as device_limits() does.
    const std::string limit = "cudaDeviceGetAttribute(cudaDevAttrMaxSharedMemoryPerBlockOptin) or "
                              "cudalab::device_limits().shared_per_block_optin";
    const std::string hint =
        static_shared > 0 && dynamic_shared > 0
            ? ": the kernel's static __shared__ memory counts against the same limit as its dynamic "
              "shared memory, so size the dynamic part from the limit less the static bytes "
              "(cudaFuncGetAttributes: sharedSizeBytes); the limit is " + limit
            : ": size the tile from the limit, " + limit;
    throw DeviceLimitError(std::string(what) + " asks for " + std::to_string(static_shared + dynamic_shared) +
                           " bytes of shared memory per block (" + std::to_string(static_shared) + " static + " +
                           std::to_string(dynamic_shared) + " dynamic); at most " +
                           std::to_string(limits.shared_per_block_optin) + " are allowed" + where + hint);
  }
  if (threads > static_cast<unsigned long long>(limits.max_threads_per_block)) {
    throw DeviceLimitError(std::string(what) + " asks for " + std::to_string(threads) +
                           " threads per block; at most " + std::to_string(limits.max_threads_per_block) +
                           " are allowed" + where);
  }
}

/// @brief Opts `kernel` in to `bytes` of dynamic shared memory per block
///        (`cudaFuncAttributeMaxDynamicSharedMemorySize`), after checking
///        that its static shared memory plus `bytes` fit the opt-in limit of
///        cudalab::device_limits() (the profile's, under a profile).
/// @param kernel a `__global__` function
/// @param bytes  dynamic shared memory per block the launches will ask for
/// @throws DeviceLimitError when static + `bytes` exceed the limit (nothing is changed).
/// @throws CudaError when a CUDA call fails.
inline void set_dynamic_shared(const void* kernel, std::size_t bytes) {
  cudaFuncAttributes attr{};
  CUDALAB_CHECK(cudaFuncGetAttributes(&attr, kernel));
  check_launch_fits(device_limits(), "a kernel", 1, attr.sharedSizeBytes, bytes);
  if (bytes > 48 * 1024 || static_cast<int>(bytes) > attr.maxDynamicSharedSizeBytes) {
    CUDALAB_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
  }
}

/// @brief set_dynamic_shared for a `__global__` function pointer, as written
///        in a launch (`set_dynamic_shared(my_kernel<T>, bytes)`).
/// @param kernel the kernel
/// @param bytes  dynamic shared memory per block the launches will ask for
/// @throws DeviceLimitError when its static shared memory plus `bytes` exceed the limit.
/// @throws CudaError when a CUDA call fails.
template <class... Args>
void set_dynamic_shared(void (*kernel)(Args...), std::size_t bytes) {
  set_dynamic_shared(reinterpret_cast<const void*>(kernel), bytes);
}

/// @brief Blocks of `kernel` that can be resident on one SM at once with
///        `threads` threads and `dynamic_shared` bytes of dynamic shared
///        memory per block: the occupancy API's answer
///        (`cudaOccupancyMaxActiveBlocksPerMultiprocessor`, the real device),
///        capped by cudalab::device_limits()' resident blocks, threads and
///        shared memory per SM (the profile's, under a profile). At least 1.
/// @throws CudaError when a CUDA call fails.
inline int resident_blocks_per_sm(const void* kernel, int threads, std::size_t dynamic_shared) {
  int per_sm = 0;
  CUDALAB_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, dynamic_shared));
  const DeviceLimits l = device_limits();
  if (l.profile[0] != '\0') {
    cudaFuncAttributes attr{};
    CUDALAB_CHECK(cudaFuncGetAttributes(&attr, kernel));
    per_sm = std::min(per_sm, l.max_blocks_per_sm);
    if (threads > 0) per_sm = std::min(per_sm, l.max_threads_per_sm / threads);
    const std::size_t per_block = attr.sharedSizeBytes + dynamic_shared;
    if (per_block > 0) per_sm = std::min<int>(per_sm, static_cast<int>(l.shared_per_sm / per_block));
  }
  return std::max(per_sm, 1);
}

/// @brief resident_blocks_per_sm for a `__global__` function pointer.
/// @param kernel         the kernel
/// @param threads        threads per block
/// @param dynamic_shared dynamic shared memory per block, bytes
/// @return resident blocks per SM, at least 1.
/// @throws CudaError when a CUDA call fails.
template <class... Args>
int resident_blocks_per_sm(void (*kernel)(Args...), int threads, std::size_t dynamic_shared) {
  return resident_blocks_per_sm(reinterpret_cast<const void*>(kernel), threads, dynamic_shared);
}

/// @brief The grid that gives each block `per_block` of `count` items
///        (elements, tiles, pairs, ...): ⌈count / per_block⌉ blocks, the
///        last one partly used, as the `unsigned` a launch takes.
///
/// The grid size of the launchers whose kernels take one item per thread
/// (per_block = the block's threads) or one tile per block (per_block =
/// the tile); given code, not part of an exercise.
/// @param count     number of items; 0 gives 0 blocks, which the callers never launch
/// @param per_block items per block, > 0
/// @return `(count + per_block - 1) / per_block`, converted to `unsigned`
///         (the callers' limits keep it below 2^32).
/// O(1); no CUDA call, never throws.
constexpr unsigned blocks_for(std::size_t count, std::size_t per_block) {
  return static_cast<unsigned>((count + per_block - 1) / per_block);
}

/// @brief Blocks of `threads` threads that fill the device once when each
///        SM holds as many as its thread limit allows (sm_count ×
///        max_threads_per_sm / threads, of cudalab::device_limits()): the
///        grid of a grid-stride loop whose kernel is not limited by
///        registers or shared memory. At least 1.
/// @throws CudaError when there is no device.
inline std::size_t full_wave_blocks(int threads) {
  const DeviceLimits l = device_limits();
  const std::size_t per_sm = threads > 0 ? static_cast<std::size_t>(l.max_threads_per_sm / threads) : 1;
  return std::max<std::size_t>(1, static_cast<std::size_t>(l.sm_count) * std::max<std::size_t>(per_sm, 1));
}

}  // namespace cudalab
