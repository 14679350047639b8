#pragma once
/// @file sparse_device_array.cuh
/// @brief Device arrays too large to allocate, for tests of indices at the
/// limit of a 32-bit type: the array's whole address range is reserved, but
/// only its last elements have memory behind them.
///
/// A graph of \f$2^{32} - 1\f$ edges, the most that 32-bit row offsets
/// allow, needs 32 GiB for its heads and weights. A test that only needs its
/// last few edges to exist (an index computed in 32 bits wraps past
/// \f$2^{32} - 1\f$ to the first ones) makes both arrays sparse: 16 GiB of
/// addresses each, with memory for the last allocation granule (2 MiB on
/// current GPUs) only. Reading an element without memory is a fault
/// (cudaErrorIllegalAddress, and compute-sanitizer memcheck names the
/// access), so a kernel that touches anything but the backed elements fails.
///
/// How: CUDA's virtual memory management (cuMemAddressReserve, cuMemCreate
/// for the backed granules only, cuMemMap, cuMemSetAccess). The test
/// program's allocator does it (`cudalab_remote_malloc_sparse` in
/// tests/common/remote_checker.cu), not this header: the exercise runs in
/// the runner process (cudalab/test/remote.hpp), which can map only the test
/// program's own buffers, at the same addresses, and maps a sparse one as it
/// maps those (its memory, where it is). cudaFree unmaps, releases and frees
/// the range, as for every buffer. The driver is reached through the
/// runtime's entry-point query, so a test program starts without libcuda,
/// on a machine without a GPU driver, where GPU tests skip.
#include <cuda.h>
#include <cuda_runtime.h>
#include <cudaTypedefs.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "cudalab/error.cuh"

/// @brief The test program's sparse allocation (remote_checker.cu): a buffer
/// of `size` bytes whose memory covers only its last `backed` bytes, in
/// whole granules; `*unbacked` receives the number of its first bytes that
/// have none. Freed by cudaFree. Returns cudaErrorNoDevice without a GPU,
/// cudaErrorMemoryAllocation when the range or the memory is not available.
extern "C" cudaError_t cudalab_remote_malloc_sparse(void** ptr, size_t size, size_t backed, size_t* unbacked);

namespace cudalab::test {

namespace detail {

/// A driver function through the runtime (no libcuda link), or null.
inline void* driver_function(const char* symbol) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
#if CUDART_VERSION >= 12050
  const cudaError_t err = cudaGetDriverEntryPointByVersion(symbol, &fn, 12000, cudaEnableDefault, &found);
#else
  const cudaError_t err = cudaGetDriverEntryPoint(symbol, &fn, cudaEnableDefault, &found);
#endif
  return err == cudaSuccess && found == cudaDriverEntryPointSuccess ? fn : nullptr;
}

}  // namespace detail

/// @brief Why the current device cannot hold a SparseDeviceArray, or ""
/// when it can: the device lacks CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
/// or the driver cannot be asked. For GTEST_SKIP in a test's own body.
/// @throws cudalab::CudaError when cudaGetDevice fails
inline std::string sparse_arrays_unsupported() {
  int ordinal = 0;
  CUDALAB_CHECK(cudaGetDevice(&ordinal));
  const auto get = reinterpret_cast<PFN_cuDeviceGet_v2000>(detail::driver_function("cuDeviceGet"));
  const auto attribute =
      reinterpret_cast<PFN_cuDeviceGetAttribute_v2000>(detail::driver_function("cuDeviceGetAttribute"));
  if (get == nullptr || attribute == nullptr)
    return "the CUDA driver gives no cuDeviceGet or cuDeviceGetAttribute, so the test cannot ask whether the device "
           "supports virtual memory management";
  CUdevice device = 0;
  int supported = 0;
  if (get(&device, ordinal) != CUDA_SUCCESS ||
      attribute(&supported, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, device) != CUDA_SUCCESS)
    return "cuDeviceGetAttribute(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED) failed on device " +
           std::to_string(ordinal);
  if (supported == 0)
    return "device " + std::to_string(ordinal) + " does not support CUDA virtual memory management "
           "(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED is 0), which a sparse device array needs";
  return {};
}

/// @brief A device array of size() elements of T whose address range is
/// reserved in full but whose memory covers only the elements from
/// first_backed() to the end (at least the last `backed` ones, rounded out
/// to whole allocation granules). Reading or writing an element before
/// first_backed() faults. Owning, neither copyable nor movable; its
/// pointer works as an argument of the exercise's calls like a cudaMalloc
/// buffer's (the runner maps it too), and the bytes after its last element
/// up to the next 256-byte boundary hold poison (0xA5), as after every
/// buffer of the test program.
template <class T>
class SparseDeviceArray {
 public:
  /// @brief Reserves `count` elements with memory for (at least) the last `backed`.
  /// @param count  the array's length, at least 1
  /// @param backed how many of its last elements must have memory, at most count
  /// @throws std::invalid_argument when count is 0, backed exceeds count, or
  ///         count * sizeof(T) overflows
  /// @throws cudalab::CudaError when the allocation fails (cudaErrorNoDevice
  ///         without a GPU, cudaErrorMemoryAllocation when the address range
  ///         or the memory is not available)
  SparseDeviceArray(std::size_t count, std::size_t backed) : size_(count) {
    if (count == 0 || backed > count || count > static_cast<std::size_t>(-1) / sizeof(T))
      throw std::invalid_argument("SparseDeviceArray: " + std::to_string(count) + " elements with the last " +
                                  std::to_string(backed) + " backed");
    std::size_t unbacked = 0;
    void* p = nullptr;
    CUDALAB_CHECK(cudalab_remote_malloc_sparse(&p, count * sizeof(T), backed * sizeof(T), &unbacked));
    data_ = static_cast<T*>(p);
    first_backed_ = (unbacked + sizeof(T) - 1) / sizeof(T);
  }
  SparseDeviceArray(const SparseDeviceArray&) = delete;
  SparseDeviceArray& operator=(const SparseDeviceArray&) = delete;
  /// Unmaps and releases the memory and frees the address range (cudaFree).
  ~SparseDeviceArray() { (void)cudaFree(data_); }

  /// @return the device pointer to element 0 (which has no memory unless first_backed() is 0).
  T* data() noexcept { return data_; }
  /// @return the device pointer to element 0.
  const T* data() const noexcept { return data_; }
  /// @return the number of elements.
  std::size_t size() const noexcept { return size_; }
  /// @return the first element with memory: elements [first_backed(), size()) may be accessed.
  std::size_t first_backed() const noexcept { return first_backed_; }

  /// @brief Copies `values` into the last values.size() elements (synchronous).
  /// @param values at most size() - first_backed() elements
  /// @throws std::invalid_argument when they would reach an element without memory
  /// @throws cudalab::CudaError when the copy fails
  void upload_tail(const std::vector<T>& values) {
    if (values.size() > size_ - first_backed_)
      throw std::invalid_argument("SparseDeviceArray::upload_tail: " + std::to_string(values.size()) +
                                  " elements, but only the last " + std::to_string(size_ - first_backed_) +
                                  " have memory");
    if (values.empty()) return;
    CUDALAB_CHECK(cudaMemcpy(data_ + (size_ - values.size()), values.data(), values.size() * sizeof(T),
                             cudaMemcpyHostToDevice));
  }

 private:
  T* data_ = nullptr;
  std::size_t size_ = 0;
  std::size_t first_backed_ = 0;
};

}  // namespace cudalab::test
