// RED TEAM: 4.4 without the aggregation: the warp's selected elements go out through the
// RED TEAM: given warp_aggregated_append (cudalab/warp_aggregated.cuh, the course's reference
// RED TEAM: solution of 4.4, given to 4.7), called unqualified inside namespace cudalab::filter.
// Exercise 4.4: filter with warp-aggregated atomics (__ballot_sync, __popc,
// one atomicAdd per warp per chunk, __shfl_sync).
// Lesson: chapters/04-filtering-atomics/README.md, "4.4".
// Grade:  tools/grade 4.4      Hints: tools/grade --hint 4.4
#include <cstddef>

#include "cudalab/error.cuh"
#include "cudalab/filter.cuh"
#include "cudalab/warp_aggregated.cuh"
// @REDTEAM_LIB@
#include "cudalab/warp.cuh"
#include "cudalab/warp_striped.cuh"

namespace cudalab::filter {
namespace {

using namespace warp_striped;  // kThreads, kWarps, kRounds, kChunk, kTile (cudalab/warp_striped.cuh)

// Warp w of block b filters the chunk in[c, c + 256), c = (8b + w) * 256;
// in round r lane l looks at in[c + 32 r + l]. Every lane reaches every
// ballot and shuffle: no lane returns before them.
template <class T, class Pred>
__global__ void __launch_bounds__(kThreads)
    warp_aggregated_kernel(const T* __restrict__ in, std::size_t n, Pred pred, T* __restrict__ out,
                           std::size_t capacity, unsigned long long* count) {
  const unsigned lane = lane_id();
  const unsigned warp = warp_id();
  const std::size_t chunk = (blockIdx.x * static_cast<std::size_t>(kWarps) + warp) * kChunk;
  T x[kRounds];
  bool selected[kRounds];
#pragma unroll
  for (int r = 0; r < kRounds; ++r) {
    const std::size_t i = chunk + static_cast<std::size_t>(r) * 32 + lane;
    x[r] = i < n ? in[i] : T{};
    selected[r] = i < n && pred(x[r]);
  }

  warp_aggregated_append(x, selected, out, capacity, count);  // the given aggregation
}

}  // namespace

template <class T, class Pred>
void copy_if_warp_aggregated(const T* in, std::size_t n, Pred pred, T* out, std::size_t capacity,
                             unsigned long long* count, cudaStream_t stream) {
  if (!detail::start_copy_if("copy_if_warp_aggregated", in, n, out, capacity, count, stream)) return;
  warp_aggregated_kernel<<<blocks_for(n, kTile), kThreads, 0, stream>>>(in, n, pred, out, capacity, count);
  CUDALAB_CHECK_LAUNCH();
}

}  // namespace cudalab::filter

CUDALAB_FILTER_INSTANTIATE(copy_if_warp_aggregated);
