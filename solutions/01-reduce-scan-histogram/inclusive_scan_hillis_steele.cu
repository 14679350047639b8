// Exercise 1.5: Hillis-Steele inclusive scan of each tile, one block per
// tile, one element per thread, double buffered in shared memory.
// Lesson: chapters/01-reduce-scan-histogram/lesson/scan.md, "1.5".
// Grade:  tools/grade 1.5      Hints: tools/grade --hint 1.5
#include <algorithm>
#include <cstddef>

#include "cudalab/error.cuh"
#include "cudalab/scan.cuh"

namespace cudalab::scan {
namespace {

// Block b scans the tile that starts at element (first_tile + b) * tile, with
// blockDim.x == tile threads. buf holds 2 * tile words of dynamic shared memory:
// the two buffers that the steps alternate between.
__global__ void hillis_steele_kernel(const int* in, std::size_t n, int* out,
                                     std::size_t first_tile) {
  extern __shared__ unsigned buf[];
  const unsigned tile = blockDim.x;
  const unsigned t = threadIdx.x;
  const std::size_t i = (first_tile + blockIdx.x) * static_cast<std::size_t>(tile) + t;
  // BEGIN SOLUTION
  // Sums in unsigned: wrap-around modulo 2^32 is defined there, not in int.
  // Past the end of the array a thread holds the identity, 0, and still takes
  // part in every step and every barrier.
  unsigned* src = buf;
  unsigned* dst = buf + tile;
  src[t] = i < n ? static_cast<unsigned>(in[i]) : 0u;
  __syncthreads();
  for (unsigned offset = 1; offset < tile; offset *= 2) {
    // Read one buffer, write the other: no thread overwrites a value that
    // another thread of the same step still has to read.
    dst[t] = t >= offset ? src[t] + src[t - offset] : src[t];
    __syncthreads();
    unsigned* const tmp = src;
    src = dst;
    dst = tmp;
  }
  if (i < n) out[i] = static_cast<int>(src[t]);
  // STARTER:
  // // TODO(1.5): load in[i] (0 past the end) into the shared buffer buf[t];
  // // then for offset = 1, 2, 4, ... < tile, every thread t writes
  // // x[t] + x[t - offset] (x[t] alone when t < offset) into the other half
  // // of buf, with a __syncthreads() after each step; finally write the last
  // // buffer back to out[i] when i < n. Add in unsigned (sums wrap modulo 2^32).
  // END SOLUTION
}

}  // namespace

void inclusive_scan_hillis_steele(const int* in, std::size_t n, int* out, std::size_t tile,
                                  cudaStream_t stream) {
  if (!detail::start_tiled_scan("inclusive_scan_hillis_steele", in, n, out, tile, 1, max_tile_hillis_steele))
    return;
  // One block of `tile` threads per tile; a grid has at most 2^31 - 1 blocks,
  // so tiny tiles of a huge array take several launches (detail::for_each_grid).
  const std::size_t shared_bytes = 2 * tile * sizeof(unsigned);
  detail::for_each_grid((n + tile - 1) / tile, [&](std::size_t first, unsigned blocks) {
    hillis_steele_kernel<<<blocks, static_cast<unsigned>(tile), shared_bytes, stream>>>(in, n, out, first);
    CUDALAB_CHECK_LAUNCH();
  });
}

}  // namespace cudalab::scan
