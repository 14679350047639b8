/// @file atomics.cuh
/// @brief atomic_add overloads for the accumulator types the course uses.
///
/// CUDA's atomicAdd has no `long long` overload; two's-complement addition is
/// the same operation on signed and unsigned 64-bit words, so the unsigned
/// intrinsic adds signed values exactly (the hardware `RED.E.ADD.64`).
#pragma once

#include <cuda_runtime.h>

namespace cudalab {

/// @brief `*address += value` as one atomic read-modify-write (relaxed, device scope).
__device__ __forceinline__ void atomic_add(long long* address, long long value) {
  atomicAdd(reinterpret_cast<unsigned long long*>(address), static_cast<unsigned long long>(value));
}
/// @brief `*address += value` as one atomic read-modify-write (relaxed, device scope).
__device__ __forceinline__ void atomic_add(float* address, float value) { atomicAdd(address, value); }
/// @brief `*address += value` as one atomic read-modify-write (relaxed, device scope).
__device__ __forceinline__ void atomic_add(int* address, int value) { atomicAdd(address, value); }

}  // namespace cudalab
