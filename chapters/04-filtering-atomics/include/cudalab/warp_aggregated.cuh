/// @file warp_aggregated.cuh
/// @brief Warp-aggregated atomics as device code: a warp appends its
///        selected elements of several rounds to an output with one
///        atomicAdd for all of them (exercise 4.4's technique), for the
///        kernels that filter with it, such as exercise 4.7's retrieve_all.
///
/// This is given code: warp_aggregated_append is the course's reference
/// solution of exercise 4.4, so 4.4 may not include this header (its
/// manifest's forbid_include), nor 4.5, which does the same aggregation
/// with cooperative groups. In the student edition its body holds 4.4's
/// TODO instead: write your own there, or copy your 4.4.
///
/// Everything here is device code that the including translation unit
/// inlines (no relocatable device code, no link step): a call costs what
/// the same code written in the kernel's own file would.
///
/// Source: A. Adinets, "CUDA Pro Tip: Optimized Filtering with
/// Warp-Aggregated Atomics", NVIDIA Developer Blog, 2014; here summed over
/// several rounds before the one atomic.
#pragma once

#include <cstddef>

#include "cudalab/warp.cuh"

namespace cudalab::filter {

/// @brief Appends the selected elements of the calling warp's kRounds
///        rounds to `out`: one atomicAdd on `count`, by lane 0, reserves the
///        slots of all of them, and each selected element goes to its slot,
///        in the order (round, lane).
///
/// Lane l's element of round r, x[r], is selected when selected[r]; it goes
/// to slot base + (the selected elements of the rounds before r) + (those
/// of the lanes below l in round r), where base is the value of *count
/// before the warp's atomicAdd. `out[slot] = x[r]` is written only for
/// slot < capacity; *count grows by the warp's number of selected elements
/// either way (so that it ends as the total, however small the output).
///
/// @tparam kRounds   rounds, elements per lane (the length of x)
/// @tparam T         the element type
/// @tparam Selected  `bool[kRounds]`, or any type whose `selected[r]` (r an
///                   int) says whether x[r] is selected, read in the round's
///                   ballot and again before its write (4.7 computes it from
///                   the slot's key there)
/// @tparam Out       the output: a pointer `T*`, or any output iterator for
///                   which `out[slot] = x[r]` with an `unsigned long long`
///                   slot writes the element (4.7 writes each slot's key and
///                   value to two arrays so)
/// @param x         this lane's elements, one per round
/// @param selected  whether each of them is selected
/// @param out       the output, room for `capacity` elements
/// @param capacity  the output's capacity, in elements
/// @param count     device pointer to the output's counter: the number of
///                  elements appended so far, by every warp of the launch
/// @pre Called by all 32 lanes of a warp together (every lane reaches the
///      ballots and the shuffle: lanes without an element pass false).
/// Work: kRounds ballots and popcounts, one atomicAdd and one shuffle per
/// warp; a warp that selects nothing returns without the atomic.
template <int kRounds, class T, class Selected, class Out>
__device__ __forceinline__ void warp_aggregated_append(const T (&x)[kRounds], const Selected& selected, Out out,
                                                       std::size_t capacity, unsigned long long* count) {
  const unsigned lane = lane_id();
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
}

}  // namespace cudalab::filter
