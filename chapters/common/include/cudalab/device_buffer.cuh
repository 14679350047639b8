/// @file device_buffer.cuh
/// @brief DeviceBuffer<T>: an owning, move-only array in device memory.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>
#include <vector>

#include "cudalab/error.cuh"

namespace cudalab {

/// @brief An owning array of `size()` elements of T in device memory (RAII).
///
/// Allocated with cudaMalloc (uninitialised), freed in the destructor; move
/// only. Copies to and from the host are synchronous unless a stream is given.
/// @tparam T a trivially copyable element type.
template <class T>
class DeviceBuffer {
 public:
  /// An empty buffer (no allocation).
  DeviceBuffer() = default;

  /// @brief Allocates `count` elements (uninitialised).
  /// @throws CudaError when the allocation fails.
  explicit DeviceBuffer(std::size_t count) : size_(count) {
    if (count > 0) CUDALAB_CHECK(cudaMalloc(reinterpret_cast<void**>(&data_), count * sizeof(T)));
  }

  /// @brief Allocates `host.size()` elements and copies `host` into them.
  /// @throws CudaError when the allocation or the copy fails.
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) { upload(host); }

  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  /// Moves the allocation; `other` becomes empty.
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  /// Frees this buffer's allocation and takes `other`'s.
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      release();
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  ~DeviceBuffer() { release(); }

  /// @return the device pointer (null when empty).
  T* data() noexcept { return data_; }
  /// @return the device pointer (null when empty).
  const T* data() const noexcept { return data_; }
  /// @return the number of elements.
  std::size_t size() const noexcept { return size_; }
  /// @return the size in bytes.
  std::size_t bytes() const noexcept { return size_ * sizeof(T); }

  /// @brief Copies `host` (at most size() elements) to the start of the buffer.
  void upload(const std::vector<T>& host) {
    if (host.size() > size_) throw std::invalid_argument("DeviceBuffer::upload: host vector larger than buffer");
    if (!host.empty())
      CUDALAB_CHECK(cudaMemcpy(data_, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  }

  /// @brief Copies the whole buffer back to a new host vector.
  std::vector<T> download() const {
    std::vector<T> host(size_);
    if (size_ > 0) CUDALAB_CHECK(cudaMemcpy(host.data(), data_, bytes(), cudaMemcpyDeviceToHost));
    return host;
  }

  /// @brief Sets every byte to `byte` (use a poison pattern before a kernel
  ///        writes, so unwritten output shows up).
  void fill_bytes(unsigned char byte, cudaStream_t stream = nullptr) {
    if (size_ > 0) CUDALAB_CHECK(cudaMemsetAsync(data_, byte, bytes(), stream));
  }

 private:
  void release() noexcept {
    if (data_ != nullptr) cudaFree(data_);  // cannot throw from a destructor
    data_ = nullptr;
    size_ = 0;
  }
  T* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace cudalab
