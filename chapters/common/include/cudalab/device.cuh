/// @file device.cuh
/// @brief Questions about the GPU the program runs on.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "cudalab/error.cuh"

namespace cudalab {

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

/// @return the properties of the current device.
/// @throws CudaError when there is no device.
inline cudaDeviceProp current_device_properties() {
  int dev = 0;
  CUDALAB_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp prop{};
  CUDALAB_CHECK(cudaGetDeviceProperties(&prop, dev));
  return prop;
}

/// @return the number of streaming multiprocessors of the current device.
/// @throws CudaError when there is no device.
inline int sm_count() {
  int dev = 0;
  CUDALAB_CHECK(cudaGetDevice(&dev));
  int sms = 0;
  CUDALAB_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  return sms;
}

}  // namespace cudalab
