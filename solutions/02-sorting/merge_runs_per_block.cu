// Exercise 2.5: medium merges, one block per pair of runs; every key is
// placed by its rank: its index in its own run plus a binary search in the
// other run.
// Lesson: chapters/02-sorting/README.md, "2.5".
// Grade:  tools/grade 2.5      Hints: tools/grade --hint 2.5
#include <cstddef>

#include "cudalab/error.cuh"
#include "cudalab/sort.cuh"

namespace cudalab::sort {
namespace {

constexpr unsigned kBlock = 256;
constexpr unsigned kSharedPair = 4096;  // a pair of at most this many keys is searched in shared memory

// The number of keys of the sorted list[0, count) that are < key
// (kUpper false, "lower bound") or <= key (kUpper true, "upper bound").
template <bool kUpper>
__device__ __forceinline__ unsigned rank_in(const int* list, unsigned count, int key) {
  // BEGIN SOLUTION
  unsigned lo = 0, hi = count;
  while (lo < hi) {
    const unsigned mid = lo + (hi - lo) / 2;
    const int x = list[mid];
    if (kUpper ? !(key < x) : x < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
  // STARTER:
  // // TODO(2.5): binary search: how many keys of list[0, count) are < key
  // // (kUpper false) or <= key (kUpper true)?
  // return 0;
  // END SOLUTION
}

// Block p merges runs 2p and 2p + 1. kShared: the pair (at most kSharedPair
// keys) is staged in shared memory, searched there and stored coalesced;
// otherwise every search reads global memory and every key is stored
// directly at its rank.
template <bool kPairs, bool kShared>
__global__ void __launch_bounds__(kBlock)
    merge_per_block_kernel(const int* keys_in, const int* values_in, std::size_t n, int* keys_out,
                           int* values_out, std::size_t run) {
  __shared__ int s_in[kShared ? kSharedPair : 1];
  __shared__ int s_out[kShared ? kSharedPair : 1];
  __shared__ int s_val[kShared && kPairs ? kSharedPair : 1];
  const std::size_t p0 = 2 * run * blockIdx.x;
  const std::size_t mid = p0 + run < n ? p0 + run : n;
  const std::size_t end = mid + run < n ? mid + run : n;
  const auto a_count = static_cast<unsigned>(mid - p0);
  const auto b_count = static_cast<unsigned>(end - mid);
  const unsigned total = a_count + b_count;
  const int* a = keys_in + p0;
  const int* b = keys_in + mid;
  if constexpr (kShared) {
    for (unsigned i = threadIdx.x; i < total; i += kBlock) s_in[i] = keys_in[p0 + i];
    __syncthreads();
    a = s_in;
    b = s_in + a_count;
  }
  // BEGIN SOLUTION
  // a[i] lands after the i keys before it in its run and after every key of
  // b that is strictly smaller; b[j] after the j before it and every key of a
  // that is smaller or equal. Ties therefore put a's key first (stable), and
  // no two keys get the same position.
  for (unsigned i = threadIdx.x; i < total; i += kBlock) {
    const bool in_a = i < a_count;
    const unsigned own = in_a ? i : i - a_count;
    const int key = in_a ? a[own] : b[own];
    const unsigned pos = own + (in_a ? rank_in<false>(b, b_count, key) : rank_in<true>(a, a_count, key));
    if constexpr (kShared) {
      s_out[pos] = key;
      if constexpr (kPairs) s_val[pos] = values_in[p0 + i];
    } else {
      keys_out[p0 + pos] = key;
      if constexpr (kPairs) values_out[p0 + pos] = values_in[p0 + i];
    }
  }
  // STARTER:
  // // TODO(2.5): for each i of the pair (stride kBlock): the key's index in its
  // // own run plus its rank in the other run (rank_in<false> for a key of a,
  // // rank_in<true> for a key of b) is its position pos; write the key (and
  // // values_in[p0 + i] with kPairs) to s_out / s_val[pos] (kShared) or to
  // // keys_out / values_out[p0 + pos].
  // END SOLUTION
  if constexpr (kShared) {
    __syncthreads();
    for (unsigned i = threadIdx.x; i < total; i += kBlock) {
      keys_out[p0 + i] = s_out[i];
      if constexpr (kPairs) values_out[p0 + i] = s_val[i];
    }
  }
}

// Launches the kernels for n > 0 and run <= n: detail::run_merge_runs
// (cudalab/sort.cuh) has checked the arguments and cut run to n before.
template <bool kPairs>
void launch(const int* keys_in, const int* values_in, std::size_t n, int* keys_out, int* values_out,
            std::size_t run, cudaStream_t stream) {
  const auto pairs = static_cast<unsigned>((n + 2 * run - 1) / (2 * run));
  if (2 * run <= kSharedPair) {
    merge_per_block_kernel<kPairs, true><<<pairs, kBlock, 0, stream>>>(keys_in, values_in, n, keys_out,
                                                                       values_out, run);
  } else {
    merge_per_block_kernel<kPairs, false><<<pairs, kBlock, 0, stream>>>(keys_in, values_in, n, keys_out,
                                                                        values_out, run);
  }
  CUDALAB_CHECK_LAUNCH();
}

}  // namespace

void merge_runs_per_block(const int* in, std::size_t n, int* out, std::size_t run, cudaStream_t stream) {
  detail::run_merge_runs("merge_runs_per_block", in, n, out, run, stream, launch<false>);
}

void merge_runs_per_block(const int* keys_in, const int* values_in, std::size_t n, int* keys_out,
                          int* values_out, std::size_t run, cudaStream_t stream) {
  detail::run_merge_runs("merge_runs_per_block", keys_in, values_in, n, keys_out, values_out, run, stream,
                         launch<true>);
}

}  // namespace cudalab::sort
