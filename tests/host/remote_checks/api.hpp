// The API of the remote-checks host test: a "student" object that keeps or
// breaks two rules of every exercise's contract, served by
// remote_checks_runner_host and called through a proxy by
// remote_checks_test_host (cudalab/test/remote.hpp): its work goes on the
// stream it is given (the runner's stream check), and what a call allocates,
// it frees (the runner's count of live allocations, checked at the end of
// every test program).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace cudalab::remote_checks {

/// Where fill() enqueues its work.
enum Where : int {
  kGiven = 0,         ///< kernel<<<1, 1024, 0, stream>>>: right
  kNoStream,          ///< kernel<<<1, 1024>>>: the legacy default stream
  kStreamZero,        ///< kernel<<<1, 1024, 0, 0>>>
  kLegacy,            ///< kernel<<<1, 1024, 0, cudaStreamLegacy>>>
  kPerThread,         ///< kernel<<<1, 1024, 0, cudaStreamPerThread>>>
  kLaunchKernelZero,  ///< cudaLaunchKernel(..., stream 0)
  kOwnStream,         ///< a stream of its own, ordered with the given one by events: right
  kMemsetNoStream,    ///< cudaMemsetAsync without its stream argument
  kMemcpyNoStream,    ///< the given stream's kernel, then cudaMemcpyAsync without its stream argument
};

/// Sets data[0, n) to `value` (n ≤ 1024, even), enqueued where `where` says;
/// kMemsetNoStream sets every byte to `value` & 0xFF, kMemcpyNoStream fills
/// the first half and copies it over the second.
void fill(int* data, int n, int value, int where, cudaStream_t stream);

/// What scratch() does with the `bytes` it allocates.
enum Memory : int {
  kFreed = 0,      ///< cudaMalloc, cudaFree: right
  kFreedAsync,     ///< cudaMallocAsync, cudaFreeAsync on the stream: right
  kCached,         ///< one buffer kept between calls, allocated by the first: right
  kLeak,           ///< cudaMalloc, never freed
  kLeakAsync,      ///< cudaMallocAsync, never freed
  kLeakThenThrow,  ///< cudaMalloc, then std::invalid_argument before its cudaFree
  kFreeLeaked,     ///< frees what the leaking calls kept (so that a test ends clean)
};

/// Allocates `bytes` of device memory and does with it what `how` says.
/// @throws std::invalid_argument for kLeakThenThrow.
void scratch(std::size_t bytes, int how, cudaStream_t stream);

/// What limits() writes: the device's limits as the "student" code reads them.
enum Limit : int {
  kAttrOptin = 0,     ///< cudaDeviceGetAttribute(cudaDevAttrMaxSharedMemoryPerBlockOptin)
  kPropOptin,         ///< cudaGetDeviceProperties: sharedMemPerBlockOptin
  kAttrSms,           ///< cudaDeviceGetAttribute(cudaDevAttrMultiProcessorCount)
  kPropSms,           ///< cudaGetDeviceProperties: multiProcessorCount
  kAttrThreadsPerSm,  ///< cudaDeviceGetAttribute(cudaDevAttrMaxThreadsPerMultiProcessor)
  kOccupancy,         ///< cudaOccupancyMaxActiveBlocksPerMultiprocessor, 1024 threads, no shared memory
  kAvailableDynamic,  ///< cudaOccupancyAvailableDynamicSMemPerBlock, one block of 1024 threads
  kSizedLaunch,       ///< 1 when a launch with kAttrOptin bytes of dynamic shared memory ran
  kLimitCount
};

/// Reads the device's limits as an exercise would size its launches from them
/// (not through cudalab::device_limits()), makes a launch with as much dynamic
/// shared memory per block as the opt-in attribute allows, and writes the
/// values (Limit) to data[0, kLimitCount) on `stream`.
void limits(int* data, cudaStream_t stream);

}  // namespace cudalab::remote_checks

#define CUDALAB_REMOTE_remote_checks(X)                                                                     \
  X(void, cudalab::remote_checks, fill, (int* data, int n, int value, int where, cudaStream_t stream),       \
    (data, n, value, where, stream))                                                                        \
  X(void, cudalab::remote_checks, scratch, (std::size_t bytes, int how, cudaStream_t stream), (bytes, how, stream)) \
  X(void, cudalab::remote_checks, limits, (int* data, cudaStream_t stream), (data, stream))
