/// @file reduce.cuh
/// @brief Chapter 1, exercises 1.1 to 1.4: the sum of an array, four ways.
///
/// Every function here computes `*out = in[0] + in[1] + ... + in[n-1]` on the
/// device and returns at once (asynchronous on `stream`).
///
/// - **int32** input is summed exactly into a 64-bit integer: |sum| < 2^63 for
///   every n ≤ max_elements, so the result does not depend on the order of the
///   additions and equals the CPU's.
/// - **float** input is summed in float. Floating-point addition is not
///   associative, so the result depends on the order the GPU happens to use
///   and may differ from run to run in the last bits. Any order satisfies
///   |computed − exact| ≤ (n − 1) · u · Σ|in[i]| with u = 2^-24 (Higham,
///   *Accuracy and Stability of Numerical Algorithms*, 2nd ed., 2002,
///   §4.2); a tree order does far better in practice, (log2 n) · u · Σ|in[i]|.
///
/// Common contract of every function:
/// @param in     device pointer to n elements (any alignment of the element type)
/// @param n      element count, 0 ≤ n ≤ max_elements
/// @param out    device pointer to one element, overwritten with the sum
/// @param stream the stream to run on (default: the legacy default stream)
/// @throws std::invalid_argument when `out` is null, when `in` is null and
///         n > 0, or when n > max_elements; nothing is launched and nothing is
///         written then.
/// @throws cudalab::CudaError when a CUDA call or a launch fails.
/// @post n = 0 writes the identity, 0.
/// @note A call with n > 0 may read `in` and write `out` after it returns:
///       synchronize `stream` before reading the result on the host.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <limits>

#include "cudalab/args.hpp"
#include "cudalab/device.cuh"
#include "cudalab/error.cuh"

/// @brief Reductions (chapter 1, exercises 1.1 to 1.4).
namespace cudalab::reduce {

/// @brief The largest n the sums accept: 2^32 − 1 elements, for which an
///        int32 sum always fits in 64 bits.
inline constexpr std::size_t max_elements = std::numeric_limits<std::uint32_t>::max();

/// @brief Exercise 1.1: one thread per element, each adding its element to
///        `*out` with one global `atomicAdd`.
///
/// Work O(n); steps O(n) in the worst case, because atomics to one address are
/// serialized by the memory system (the L2 slice that owns it): this is the
/// baseline that shows why reductions need a tree.
/// See the common contract in the file description for parameters and errors.
/// Source: the CUDA C++ Programming Guide, "Atomic Functions".
void sum_atomic(const int* in, std::size_t n, long long* out, cudaStream_t stream = nullptr);
/// @copydoc sum_atomic(const int*, std::size_t, long long*, cudaStream_t)
void sum_atomic(const float* in, std::size_t n, float* out, cudaStream_t stream = nullptr);

/// @brief Exercise 1.2: each block sums a tile of 2 × blockDim elements in
///        shared memory by a tree with sequential addressing (stride halving,
///        active threads contiguous), then adds its partial to `*out` with one
///        atomic.
///
/// Work O(n); steps O(log blockDim) per block plus O(n / (2 · blockDim))
/// serialized atomics. Sequential addressing keeps the active threads in
/// whole warps (no divergence until fewer than 32 remain) and the warp's
/// accesses in distinct banks, where the interleaved tree (`tid % (2s) == 0`,
/// then `index = 2 · s · tid`) diverges and conflicts.
/// See the common contract in the file description for parameters and errors.
/// Source: M. Harris, "Optimizing Parallel Reduction in CUDA", NVIDIA, 2007
/// (kernels 1 to 4).
void sum_shared_tree(const int* in, std::size_t n, long long* out, cudaStream_t stream = nullptr);
/// @copydoc sum_shared_tree(const int*, std::size_t, long long*, cudaStream_t)
void sum_shared_tree(const float* in, std::size_t n, float* out, cudaStream_t stream = nullptr);

/// @brief Exercise 1.3: each warp sums 32 elements with five
///        `__shfl_down_sync` steps (registers only, no shared memory, no
///        barrier), and lane 0 adds the warp's sum to `*out` with one atomic.
///
/// Work O(n); steps O(log 32) per warp plus O(n / 32) serialized atomics.
/// See the common contract in the file description for parameters and errors.
/// Source: J. Luitjens, "Faster Parallel Reductions on Kepler", NVIDIA
/// Developer Blog, 2014.
void sum_warp_shuffle(const int* in, std::size_t n, long long* out, cudaStream_t stream = nullptr);
/// @copydoc sum_warp_shuffle(const int*, std::size_t, long long*, cudaStream_t)
void sum_warp_shuffle(const float* in, std::size_t n, float* out, cudaStream_t stream = nullptr);

/// @brief Exercise 1.4: a grid sized to fill the GPU once walks the array with
///        a grid-stride loop of 16-byte vector loads (int4 / float4, several
///        in flight per thread), accumulates in registers, reduces each block
///        by warp shuffles, and adds one partial per block to `*out`.
///
/// Any n and any alignment: the elements before the first 16-byte boundary
/// and after the last whole vector are summed by scalar loads.
/// Work O(n); steps O(n / (threads in the grid) + log blockDim) plus one
/// atomic per block. Bound by memory bandwidth: it reads each byte once.
/// See the common contract in the file description for parameters and errors.
/// Source: J. Luitjens, "CUDA Pro Tip: Increase Performance with Vectorized
/// Memory Access", NVIDIA Developer Blog, 2013; M. Harris, "CUDA Pro Tip:
/// Write Flexible Kernels with Grid-Stride Loops", 2013; CUB's
/// `cub::DeviceReduce` (NVIDIA CCCL) is the baseline it races.
void sum_vectorized(const int* in, std::size_t n, long long* out, cudaStream_t stream = nullptr);
/// @copydoc sum_vectorized(const int*, std::size_t, long long*, cudaStream_t)
void sum_vectorized(const float* in, std::size_t n, float* out, cudaStream_t stream = nullptr);

namespace detail {
/// @brief The argument checks every sum performs before touching the GPU.
/// @throws std::invalid_argument as described in the file's common contract.
inline void check_sum_arguments(const char* function, const void* in, std::size_t n, const void* out) {
  require_pointer(function, "out", out, 1);
  require_pointer(function, "in", in, n);
  require_count_at_most(function, n, max_elements);
}

/// @brief The start of every sum (1.1 to 1.4, through run_sum), after
///        check_sum_arguments: sets `*out` to the identity 0 on `stream`
///        (the call overwrites it, also for n = 0).
/// @tparam Acc long long (for int input) or float
/// @param out    device pointer to the one result, set to 0 here
/// @param n      element count
/// @param stream the stream to run on; asynchronous
/// @return whether there is a kernel to launch: false for n = 0, where the
///         sum is done (`*out` is 0).
/// @throws cudalab::CudaError when the memset fails.
/// O(1) on the host; one memset of sizeof(Acc) bytes enqueued.
template <class Acc>
bool start_sum(Acc* out, std::size_t n, cudaStream_t stream) {
  CUDALAB_CHECK(cudaMemsetAsync(out, 0, sizeof(Acc), stream));
  return n != 0;
}

/// @brief The body of every public sum overload (1.1 to 1.4): checks the
///        arguments (check_sum_arguments), sets `*out` to the identity 0
///        (start_sum) and, for n > 0, calls `launch(in, n, out, stream)`,
///        the exercise's own launch of its kernel.
/// @tparam T   int or float
/// @tparam Acc long long (for int input) or float
/// @param function the public function being called, for the messages
/// @param in       device pointer to n elements
/// @param n        element count
/// @param out      device pointer to the one result
/// @param stream   the stream to run on; asynchronous
/// @param launch   the exercise's launch; called only with n > 0
/// @throws std::invalid_argument as described in the file's common contract
///         (before any CUDA call).
/// @throws cudalab::CudaError when the memset fails, and whatever `launch` throws.
/// O(1) on the host besides `launch`.
template <class T, class Acc>
void run_sum(const char* function, const T* in, std::size_t n, Acc* out, cudaStream_t stream,
             void (*launch)(const T*, std::size_t, Acc*, cudaStream_t)) {
  check_sum_arguments(function, in, n, out);
  if (start_sum(out, n, stream)) launch(in, n, out, stream);
}
}  // namespace detail

}  // namespace cudalab::reduce
