#pragma once
/// @file device_memory.cuh
/// @brief Device memory for the tests of large inputs (the LargeIndex families
/// of chapters 1 and 4): what a test may allocate, and a bounded wait for it.
///
/// Several test programs share one GPU when the grader runs exercises or
/// students side by side (`tools/grade --parallel`, `tools/grade-class
/// --per-gpu`), so a large test may find the memory it needs taken for a
/// while. It waits for it (when the device, or its profile, could hold it)
/// before it skips, so that whether a student's large test runs depends on
/// their GPU, not on the other programs of the moment.
#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <string>
#include <thread>

#include "cudalab/device.cuh"
#include "cudalab/error.cuh"

namespace cudalab::test {

/// @brief How long a large test waits for its memory: 20 s, well inside the
/// grader's time limit of a test program (300 s by default; 30 s in
/// `tools/gpu-check`'s class step), since the programs that hold it run a
/// large test for a second or two.
inline constexpr double kDeviceMemoryWaitS = 20.0;

/// @brief Device memory left free beyond a large test's own: at least 1 GiB
/// (the runner's CUDA context, the outputs) and an eighth of the device's
/// memory for the programs that share the GPU.
/// @param device_bytes the device's (or its profile's) memory, bytes
inline std::size_t memory_margin(std::size_t device_bytes) {
  return std::max(std::size_t{1} << 30, device_bytes / 8);
}

/// @brief Device memory a test may still allocate, bytes: cudaMemGetInfo's
/// free bytes and, under CUDALAB_DEVICE_PROFILE, no more than the profile's
/// memory (`limits.global_bytes`) less what is already in use.
/// @throws cudalab::CudaError when cudaMemGetInfo fails
inline std::size_t usable_device_bytes(const ::cudalab::DeviceLimits& limits) {
  std::size_t free_bytes = 0, total = 0;
  CUDALAB_CHECK(cudaMemGetInfo(&free_bytes, &total));
  const std::size_t used = total - std::min(free_bytes, total);
  return std::min(free_bytes, limits.global_bytes > used ? limits.global_bytes - used : std::size_t{0});
}

/// @brief The usable device memory once at least `need` bytes are usable, or
/// what is usable after `max_wait_s` seconds (polled every 0.2 s). It does
/// not wait when the device, or its profile, could never give `need`.
/// @throws cudalab::CudaError when cudaMemGetInfo fails
inline std::size_t wait_for_device_bytes(std::size_t need, const ::cudalab::DeviceLimits& limits,
                                         double max_wait_s = kDeviceMemoryWaitS) {
  std::size_t free_bytes = 0, total = 0;
  CUDALAB_CHECK(cudaMemGetInfo(&free_bytes, &total));
  const bool could_fit = need <= std::min(total, limits.global_bytes);
  const auto start = std::chrono::steady_clock::now();
  std::size_t usable = usable_device_bytes(limits);
  while (could_fit && usable < need &&
         std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < max_wait_s) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    usable = usable_device_bytes(limits);
  }
  return usable;
}

/// @brief `bytes` in GiB with one decimal, for messages.
inline std::string gib(std::size_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GiB",
                static_cast<double>(bytes) / static_cast<double>(std::size_t{1} << 30));
  return text;
}

/// @brief Why a test that allocates `bytes` of device memory cannot run
/// here, or "" when it can (after wait_for_device_bytes): the bytes, the
/// margin, what is free, and the device profile if one is set; `what` names
/// the data ("n = 5 int elements"). For GTEST_SKIP in the test's own body.
/// @throws cudalab::CudaError when a CUDA query fails
inline std::string device_memory_shortfall(std::size_t bytes, const std::string& what) {
  const ::cudalab::DeviceLimits limits = ::cudalab::device_limits();
  const std::size_t margin = memory_margin(limits.global_bytes);
  const std::size_t usable = wait_for_device_bytes(bytes + margin, limits);
  if (bytes + margin <= usable) return {};
  const std::string profile = limits.profile;
  return what + " need " + gib(bytes) + " of device memory and " + gib(margin) + " to spare; " + gib(usable) +
         " are free" + (profile.empty() ? std::string() : " under CUDALAB_DEVICE_PROFILE=" + profile);
}

/// @brief Makes a large test's device buffers: `allocate` (the test's
/// DeviceBuffer emplacements, `bytes` in all, `what` naming the data) runs
/// once device_memory_shortfall finds the memory. Returns "" when they
/// exist, else why the test skips: the shortfall, or an allocation that
/// failed because another program took the memory since it was free. For
/// GTEST_SKIP in the test's own body.
/// @throws cudalab::CudaError when a CUDA query or another allocation error fails
template <class Allocate>
std::string allocate_large(std::size_t bytes, const std::string& what, Allocate&& allocate) {
  if (std::string why = device_memory_shortfall(bytes, what); !why.empty()) return why;
  try {
    allocate();
  } catch (const ::cudalab::CudaError& e) {
    if (e.code() != cudaErrorMemoryAllocation) throw;
    return what + " need " + gib(bytes) +
           " of device memory; allocating them failed (another program took the memory since it was free): " +
           e.what();
  }
  return {};
}

}  // namespace cudalab::test
