/// @file merge_path.cuh
/// @brief The merge-path search on the GPU: where the path of a stable merge
///        of two sorted lists crosses a cross diagonal, found by one thread
///        (a binary search) or by a group of lanes (a k-ary search).
///
/// Exercise 2.6 has the student write merge_path in its own file; 2.7, which
/// builds a merge sort on it, takes both searches from here.
///
/// Source: Odeh, Green, Mwassi, Shmueli and Birk, "Merge Path - Parallel
/// Merging Made Simple", IPDPS Workshops 2012; Green, McColl and Bader, "GPU
/// Merge Path", ICS 2012; Baxter, moderngpu `merge_path`. The CPU reference is
/// cudalab::reference::merge_path (chapters/02-sorting/reference).
#pragma once

#include <cooperative_groups.h>
#include <cuda_runtime.h>

namespace cudalab::sort {

/// @brief The number of keys of `a` among the first `diag` keys of the stable
///        merge of the sorted lists `a[0, a_count)` and `b[0, b_count)` (keys
///        of `a` first on ties): where the merge path crosses cross diagonal
///        `diag`.
///
/// A binary search on the cross diagonal: it returns the smallest i in
/// [max(0, diag − b_count), min(diag, a_count)] with `b[diag − 1 − i] < a[i]`,
/// or the upper end when there is none.
///
/// @param a, b     sorted (ascending) int32 keys, in global or shared memory
/// @param a_count  the number of keys of a
/// @param b_count  the number of keys of b
/// @param diag     the cross diagonal, 0 ≤ diag ≤ a_count + b_count
/// @return the split i; the first `diag` outputs are `a[0, i)` and
///         `b[0, diag − i)`
///
/// Work: at most ⌈log2(min(a_count, b_count) + 1)⌉ steps of two dependent
/// loads each, by the calling thread alone (no warp or block cooperation).
__device__ __forceinline__ unsigned merge_path(const int* a, unsigned a_count, const int* b, unsigned b_count,
                                               unsigned diag) {
  unsigned begin = diag > b_count ? diag - b_count : 0;
  unsigned end = diag < a_count ? diag : a_count;
  while (begin < end) {
    const unsigned mid = begin + (end - begin) / 2;
    // a[mid] precedes b[diag - 1 - mid] in the merge (ties: a first), so the
    // path takes more than mid keys of a.
    if (!(b[diag - 1 - mid] < a[mid])) begin = mid + 1;
    else end = mid;
  }
  return begin;
}

/// @brief merge_path by the kLanes lanes of `group` together: the same
///        split, found by a (kLanes + 1)-ary search.
///
/// Each round the lanes test the kLanes points that cut the range [lo, hi)
/// into kLanes + 1 parts, and a ballot finds the part where the path crosses.
///
/// @tparam kLanes  lanes of the group, a power of two from 2 to 32
/// @param group    the calling tile; every lane of it calls with the same
///                 arguments, and none has left (the ballot takes the whole tile)
/// @param a, b, a_count, b_count, diag  as for merge_path
/// @return the split, in every lane of the group
///
/// Work: for a range of r candidate splits, about log_{kLanes+1}(r) rounds
/// instead of log2(r), each of 2 kLanes loads instead of 2.
/// Source: Schlegel, Gemulla and Lehner, "k-ary search on modern processors",
/// DaMoN 2009.
template <unsigned kLanes>
__device__ __forceinline__ unsigned merge_path_kary(const cooperative_groups::thread_block_tile<kLanes>& group,
                                                    const int* a, unsigned a_count, const int* b, unsigned b_count,
                                                    unsigned diag) {
  unsigned lo = diag > b_count ? diag - b_count : 0;
  unsigned hi = diag < a_count ? diag : a_count;
  // The k-th cut of [lo, lo + width): lo + floor(k width / (kLanes + 1)).
  const auto cut = [](unsigned lo, unsigned width, unsigned k) {
    return lo + static_cast<unsigned>(static_cast<unsigned long long>(k) * width / (kLanes + 1));
  };
  while (lo < hi) {
    const unsigned width = hi - lo;
    const unsigned m = cut(lo, width, group.thread_rank() + 1);
    // As in merge_path: true when the path takes more than m keys of a.
    const bool more = !(b[diag - 1 - m] < a[m]);
    const unsigned c = __popc(group.ballot(more));  // true for cuts 1..c, false above
    const unsigned new_lo = c > 0 ? cut(lo, width, c) + 1 : lo;
    hi = c < kLanes ? cut(lo, width, c + 1) : hi;
    lo = new_lo;
  }
  return lo;
}

}  // namespace cudalab::sort
