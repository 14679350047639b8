// Exercise 4.3: filter with cub::BlockScan for the offsets within a block
// (input order kept within each tile) and one global atomicAdd per block.
// Lesson: chapters/04-filtering-atomics/README.md, "4.3".
// Grade:  tools/grade 4.3      Hints: tools/grade --hint 4.3
#include <cub/block/block_load.cuh>
#include <cub/block/block_scan.cuh>

#include <cstddef>

#include "cudalab/error.cuh"
#include "cudalab/filter.cuh"

namespace cudalab::filter {
namespace {

constexpr int kThreads = 256;             // threads per block
constexpr int kItems = 8;                 // elements per thread
constexpr int kTile = kThreads * kItems;  // 2048 elements per block
static_assert(kTile == copy_if_block_scan_tile, "the tile the header promises order within");

// Block b filters the tile in[b * kTile, (b + 1) * kTile). After the load,
// thread t holds the tile's elements t * kItems .. t * kItems + kItems - 1
// (a *blocked* arrangement: cub::BlockLoad reads the tile with coalesced
// loads and transposes it through shared memory), so the threads' order is
// the input order and an exclusive scan of their counts gives each thread
// the number of selected elements before its own.
template <class T, class Pred>
__global__ void __launch_bounds__(kThreads)
    block_scan_kernel(const T* __restrict__ in, std::size_t n, Pred pred, T* __restrict__ out,
                      std::size_t capacity, unsigned long long* count) {
  using Load = cub::BlockLoad<T, kThreads, kItems, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
  using Scan = cub::BlockScan<unsigned, kThreads>;
  __shared__ union {
    typename Load::TempStorage load;
    typename Scan::TempStorage scan;
    T staged[kTile];  // the selected elements of the tile, compacted, in input order
  } temp;
  __shared__ unsigned long long s_base;  // where the tile's run starts in out

  const std::size_t base = blockIdx.x * static_cast<std::size_t>(kTile);
  const int valid = static_cast<int>(n - base < static_cast<std::size_t>(kTile) ? n - base : kTile);
  T x[kItems];
  Load(temp.load).Load(in + base, x, valid, T{});
  __syncthreads();  // the load's shared memory is reused below
  const int first = static_cast<int>(threadIdx.x) * kItems;  // tile index of x[0]

  // TODO(4.3): flag x[k] when first + k < valid and pred(x[k]); count this
  // thread's flags; Scan(temp.scan).ExclusiveSum(mine, offset, total);
  // thread 0 reserves `total` slots with one atomicAdd on count (old value
  // in s_base); __syncthreads(); write the selected elements in order to
  // temp.staged[offset++], __syncthreads(), then copy temp.staged[0 .. total)
  // to out[s_base + j] where that is below capacity.
}

}  // namespace

template <class T, class Pred>
void copy_if_block_scan(const T* in, std::size_t n, Pred pred, T* out, std::size_t capacity,
                        unsigned long long* count, cudaStream_t stream) {
  if (!detail::start_copy_if("copy_if_block_scan", in, n, out, capacity, count, stream)) return;
  block_scan_kernel<<<blocks_for(n, kTile), kThreads, 0, stream>>>(in, n, pred, out, capacity, count);
  CUDALAB_CHECK_LAUNCH();
}

}  // namespace cudalab::filter

CUDALAB_FILTER_INSTANTIATE(copy_if_block_scan);
