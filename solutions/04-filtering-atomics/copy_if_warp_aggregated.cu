// Exercise 4.4: filter with warp-aggregated atomics (__ballot_sync, __popc,
// one atomicAdd per warp per chunk, __shfl_sync).
// Lesson: chapters/04-filtering-atomics/README.md, "4.4".
// Grade:  tools/grade 4.4      Hints: tools/grade --hint 4.4
#include <cstddef>

#include "cudalab/error.cuh"
#include "cudalab/filter.cuh"
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

  // BEGIN SOLUTION
  // 1. The warp votes once per round: bit l of mask[r] is lane l's flag.
  unsigned mask[kRounds];
  unsigned total = 0;
#pragma unroll
  for (int r = 0; r < kRounds; ++r) {
    mask[r] = __ballot_sync(kFullMask, selected[r]);
    total += static_cast<unsigned>(__popc(mask[r]));
  }
  if (total == 0) return;  // the same for every lane of the warp
  // 2. One lane reserves the whole chunk's slots; the shuffle gives every
  //    lane the start of the warp's run.
  unsigned long long base = 0;
  if (lane == 0) base = atomicAdd(count, static_cast<unsigned long long>(total));
  base = __shfl_sync(kFullMask, base, 0);
  // 3. Lane l's rank in round r: the selected lanes below it.
  const unsigned lower = (1u << lane) - 1u;
#pragma unroll
  for (int r = 0; r < kRounds; ++r) {
    if (selected[r]) {
      const unsigned long long slot = base + static_cast<unsigned>(__popc(mask[r] & lower));
      if (slot < capacity) out[slot] = x[r];
    }
    base += static_cast<unsigned>(__popc(mask[r]));
  }
  // STARTER:
  // // TODO(4.4): per round r, mask = __ballot_sync(kFullMask, selected[r]);
  // // add up __popc(mask) over the rounds; lane 0 reserves that total with
  // // one atomicAdd on count and __shfl_sync broadcasts the old value; the
  // // selected lanes of round r write at base + (selected rounds before r) +
  // // __popc(mask & ((1u << lane) - 1)), only below capacity.
  // END SOLUTION
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
