/// @file async_buffer.cuh
/// @brief AsyncBuffer<T>: scratch memory for one call of a multi-kernel
///        algorithm, allocated and freed in stream order (cudaMallocAsync /
///        cudaFreeAsync), so that a launcher can stay asynchronous.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <utility>

#include "cudalab/error.cuh"

namespace cudalab {

namespace detail {
/// Room the pool's release threshold leaves above what a caller asks to
/// keep: the pool maps memory in chunks of at least 2 MiB, so allocations
/// whose sizes add up to exactly the threshold can still exceed it, and the
/// pool then hands one of them back at every synchronize, and the next call
/// maps it again (for 2.7's scratch, a visible part of a sort's time).
inline constexpr std::uint64_t kPoolHeadroom = std::uint64_t{32} << 20;

/// Raises the release threshold of the current device's default memory pool
/// to at least `bytes` + kPoolHeadroom (never lowers it), so that scratch of
/// up to `bytes` in all, freed by one call, stays mapped for the next (as
/// CUB's caching allocator keeps it); without this the pool returns it to
/// the driver at every synchronize. Calls that ask for no more than an
/// earlier call on the device cost no CUDA call.
/// @throws CudaError when the pool cannot be queried or set.
inline void keep_pool_memory(std::uint64_t bytes) {
  static std::uint64_t kept[64] = {};
  int dev = 0;
  CUDALAB_CHECK(cudaGetDevice(&dev));
  if (dev < 0 || dev >= 64 || kept[dev] >= bytes) return;
  cudaMemPool_t pool{};
  CUDALAB_CHECK(cudaDeviceGetDefaultMemPool(&pool, dev));
  std::uint64_t threshold = 0;
  CUDALAB_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  std::uint64_t wanted = bytes + kPoolHeadroom;
  if (threshold < wanted)
    CUDALAB_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &wanted));
  kept[dev] = bytes;
}
}  // namespace detail

/// @brief `count` elements of T in device memory, allocated on `stream` with
///        cudaMallocAsync and freed on the same stream with cudaFreeAsync
///        when the buffer goes out of scope (RAII, move only).
///
/// Kernels enqueued on `stream` between construction and destruction may use
/// it; the free is ordered after them, so the host never waits. The first
/// use per device raises the default pool's release threshold to 64 MiB plus
/// detail::kPoolHeadroom, so that repeated calls reuse the same memory
/// instead of remapping it.
/// @tparam T a trivially copyable element type.
template <class T>
class AsyncBuffer {
 public:
  /// @brief Allocates `count` elements (uninitialised) on `stream`.
  /// @throws CudaError when the allocation fails.
  AsyncBuffer(std::size_t count, cudaStream_t stream) : size_(count), stream_(stream) {
    if (count == 0) return;
    detail::keep_pool_memory(std::uint64_t{64} << 20);
    CUDALAB_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&data_), count * sizeof(T), stream));
  }
  AsyncBuffer(const AsyncBuffer&) = delete;
  AsyncBuffer& operator=(const AsyncBuffer&) = delete;
  /// Moves the allocation; `other` becomes empty.
  AsyncBuffer(AsyncBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)),
        stream_(other.stream_) {}
  AsyncBuffer& operator=(AsyncBuffer&&) = delete;
  /// Enqueues the free on the allocation's stream (errors ignored: a destructor cannot throw).
  ~AsyncBuffer() {
    if (data_ != nullptr) cudaFreeAsync(data_, stream_);
  }

  /// @return the device pointer (null when empty).
  T* data() noexcept { return data_; }
  /// @return the number of elements.
  std::size_t size() const noexcept { return size_; }
  /// @return the size in bytes.
  std::size_t bytes() const noexcept { return size_ * sizeof(T); }

  /// @brief Enqueues a memset of every byte to `byte` on the buffer's stream.
  /// @throws CudaError when the memset cannot be enqueued.
  void fill_bytes(unsigned char byte) {
    if (size_ > 0) CUDALAB_CHECK(cudaMemsetAsync(data_, byte, bytes(), stream_));
  }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
  cudaStream_t stream_ = nullptr;
};

}  // namespace cudalab
