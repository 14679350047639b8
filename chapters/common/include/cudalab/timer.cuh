/// @file timer.cuh
/// @brief EventTimer: elapsed device time between two points of a stream.
#pragma once

#include <cuda_runtime.h>

#include "cudalab/error.cuh"

namespace cudalab {

/// @brief Times work on a stream with a pair of CUDA events.
///
/// `start(s)` and `stop(s)` record events on stream s; `elapsed_ms()` waits for
/// the stop event and returns the device time between them in milliseconds
/// (resolution about 0.5 microseconds). Device work is asynchronous, so host
/// clocks around a launch measure the launch, not the kernel: use this.
class EventTimer {
 public:
  /// @throws CudaError when the events cannot be created.
  EventTimer() {
    CUDALAB_CHECK(cudaEventCreate(&start_));
    CUDALAB_CHECK(cudaEventCreate(&stop_));
  }
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;
  ~EventTimer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  /// Records the start event on `stream`.
  void start(cudaStream_t stream = nullptr) { CUDALAB_CHECK(cudaEventRecord(start_, stream)); }
  /// Records the stop event on `stream`.
  void stop(cudaStream_t stream = nullptr) { CUDALAB_CHECK(cudaEventRecord(stop_, stream)); }
  /// @return milliseconds between start and stop; blocks until stop completes.
  float elapsed_ms() const {
    CUDALAB_CHECK(cudaEventSynchronize(stop_));
    float ms = 0.0f;
    CUDALAB_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return ms;
  }

 private:
  cudaEvent_t start_{};
  cudaEvent_t stop_{};
};

}  // namespace cudalab
