// Exercise 4.5: the warp-aggregated filter of 4.4 in cooperative groups:
// tiled_partition<32> for the warps, coalesced_threads() for the lanes that
// have something to write, cg::exclusive_scan and cg::reduce over them.
// Lesson: chapters/04-filtering-atomics/README.md, "4.5".
// Grade:  tools/grade 4.5      Hints: tools/grade --hint 4.5
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>

#include <cstddef>

#include "cudalab/error.cuh"
#include "cudalab/filter.cuh"
#include "cudalab/warp_striped.cuh"

namespace cudalab::filter {
namespace {

namespace cg = cooperative_groups;

using namespace warp_striped;  // kThreads, kWarps, kRounds, kChunk, kTile (cudalab/warp_striped.cuh)

// Warp w (the tile of 32 threads with meta_group_rank() w) of block b
// filters the chunk in[c, c + 256), c = (8b + w) * 256; in round r its
// thread of rank l looks at in[c + 32 r + l].
template <class T, class Pred>
__global__ void __launch_bounds__(kThreads)
    cooperative_groups_kernel(const T* __restrict__ in, std::size_t n, Pred pred, T* __restrict__ out,
                              std::size_t capacity, unsigned long long* count) {
  const cg::thread_block block = cg::this_thread_block();
  const cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  const std::size_t chunk = (blockIdx.x * static_cast<std::size_t>(kWarps) + warp.meta_group_rank()) * kChunk;
  T x[kRounds];
  bool selected[kRounds];
  unsigned mine = 0;  // how many of this thread's elements are selected
#pragma unroll
  for (int r = 0; r < kRounds; ++r) {
    const std::size_t i = chunk + static_cast<std::size_t>(r) * 32 + warp.thread_rank();
    x[r] = i < n ? in[i] : T{};
    selected[r] = i < n && pred(x[r]);
    mine += selected[r] ? 1u : 0u;
  }

  // TODO(4.5): in the threads with mine > 0: active = cg::coalesced_threads();
  // offset = cg::exclusive_scan(active, mine); total = cg::reduce(active,
  // mine, cg::plus<unsigned>()); the thread of rank 0 reserves total slots
  // with atomicAdd on count; active.shfl(base, 0) + offset is this thread's
  // first slot; write its selected elements to consecutive slots, only
  // below capacity.
}

}  // namespace

template <class T, class Pred>
void copy_if_cooperative_groups(const T* in, std::size_t n, Pred pred, T* out, std::size_t capacity,
                                unsigned long long* count, cudaStream_t stream) {
  if (!detail::start_copy_if("copy_if_cooperative_groups", in, n, out, capacity, count, stream)) return;
  cooperative_groups_kernel<<<blocks_for(n, kTile), kThreads, 0, stream>>>(in, n, pred, out, capacity, count);
  CUDALAB_CHECK_LAUNCH();
}

}  // namespace cudalab::filter

CUDALAB_FILTER_INSTANTIATE(copy_if_cooperative_groups);
