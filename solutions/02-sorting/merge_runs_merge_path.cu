// Exercise 2.6: few huge merges, spread over all SMs by merge-path
// partitioning: every block merges one tile of 1920 outputs.
// Lesson: chapters/02-sorting/README.md, "2.6".
// Grade:  tools/grade 2.6      Hints: tools/grade --hint 2.6
#include <cstddef>

#include "cudalab/async_buffer.cuh"
#include "cudalab/error.cuh"
#include "cudalab/merge_tiles.cuh"
#include "cudalab/sort.cuh"

namespace cudalab::sort {
namespace {

constexpr unsigned kThreads = 128;
constexpr unsigned kItems = 15;                  // outputs per thread (odd: no bank conflicts)
constexpr unsigned kTile = kThreads * kItems;    // outputs per block
constexpr unsigned kPartitionThreads = 128;

// The number of keys of a among the first `diag` keys of the stable merge of
// the sorted lists a[0, a_count) and b[0, b_count) (a first on ties): the
// point where the merge path crosses cross diagonal `diag`.
__device__ __forceinline__ unsigned merge_path(const int* a, unsigned a_count, const int* b,
                                               unsigned b_count, unsigned diag) {
  // BEGIN SOLUTION
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
  // STARTER:
  // // TODO(2.6): binary search on cross diagonal diag, i in
  // // [max(0, diag - b_count), min(diag, a_count)]: move right while
  // // a[mid] <= b[diag - 1 - mid] (a first on ties); return the split.
  // return diag < a_count ? diag : a_count;
  // END SOLUTION
}

// splits[t] = the merge-path split at the first output of tile t.
__global__ void partition_kernel(const int* keys, std::size_t n, std::size_t run, std::size_t tiles_per_pair,
                                 std::size_t tiles, unsigned* splits) {
  const std::size_t t = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= tiles) return;
  const detail::TileGeometry g = detail::tile_geometry<kTile>(t, n, run, tiles_per_pair);
  splits[t] = merge_path(keys + g.p0, g.a_count, keys + g.p0 + g.a_count, g.b_count, g.diag0);
}

// Block `tile` merges its slices a[a0, a1) and b[b0, b1) into outputs
// [diag0, diag1) of its pair.
template <bool kPairs>
__global__ void __launch_bounds__(kThreads)
    merge_kernel(const int* keys_in, const int* values_in, std::size_t n, int* keys_out, int* values_out,
                 std::size_t run, std::size_t tiles_per_pair, const unsigned* splits) {
  __shared__ int s_keys[kTile];
  __shared__ int s_vals[kPairs ? kTile : 1];
  const std::size_t tile = blockIdx.x;
  const detail::TileGeometry g = detail::tile_geometry<kTile>(tile, n, run, tiles_per_pair);
  const unsigned a0 = splits[tile];
  const unsigned a1 = g.diag1 == g.a_count + g.b_count ? g.a_count : splits[tile + 1];
  const unsigned b0 = g.diag0 - a0;
  const unsigned na = a1 - a0;
  const unsigned count = g.diag1 - g.diag0;  // a's na, then b's count - na
  const std::size_t a_base = g.p0 + a0;
  const std::size_t b_base = g.p0 + g.a_count + b0;
  const unsigned t = threadIdx.x;

  // Stage both slices in shared memory, a's then b's (coalesced loads).
  for (unsigned i = t; i < count; i += kThreads) {
    const std::size_t from = i < na ? a_base + i : b_base + (i - na);
    s_keys[i] = keys_in[from];
    if constexpr (kPairs) s_vals[i] = values_in[from];
  }
  __syncthreads();

  int keys[kItems];
  int vals[kItems];
  // BEGIN SOLUTION
  // This thread's outputs start at diag; find its split in shared memory and
  // merge kItems keys serially.
  const unsigned diag = t * kItems < count ? t * kItems : count;
  const unsigned split = merge_path(s_keys, na, s_keys + na, count - na, diag);
  unsigned ai = split;             // next key of a (index into s_keys)
  unsigned bi = na + diag - split;  // next key of b (index into s_keys)
#pragma unroll
  for (unsigned v = 0; v < kItems; ++v) {
    if (diag + v < count) {
      const bool take_b = bi < count && (ai >= na || s_keys[bi] < s_keys[ai]);
      const unsigned from = take_b ? bi++ : ai++;
      keys[v] = s_keys[from];
      if constexpr (kPairs) vals[v] = s_vals[from];
    }
  }
  // STARTER:
  // // TODO(2.6): this thread's outputs are diag = min(t * kItems, count) and
  // // on; find its split with merge_path on s_keys[0, na) and s_keys[na, count),
  // // then merge serially into keys[v] (and vals[v]) for v < kItems while
  // // diag + v < count (take b only when strictly smaller).
  // const unsigned diag = t * kItems < count ? t * kItems : count;
  // for (unsigned v = 0; v < kItems; ++v) keys[v] = vals[v] = 0;
  // END SOLUTION
  __syncthreads();  // everyone has read the staged slices
#pragma unroll
  for (unsigned v = 0; v < kItems; ++v) {
    if (diag + v < count) {
      s_keys[diag + v] = keys[v];  // diag = t * kItems here: odd stride, no bank conflicts
      if constexpr (kPairs) s_vals[diag + v] = vals[v];
    }
  }
  __syncthreads();
  const std::size_t out_base = g.p0 + g.diag0;
  for (unsigned i = t; i < count; i += kThreads) {
    keys_out[out_base + i] = s_keys[i];
    if constexpr (kPairs) values_out[out_base + i] = s_vals[i];
  }
}

// Launches the kernels for n > 0 and run <= n: detail::run_merge_runs
// (cudalab/sort.cuh) has checked the arguments and cut run to n before.
template <bool kPairs>
void launch(const int* keys_in, const int* values_in, std::size_t n, int* keys_out, int* values_out,
            std::size_t run, cudaStream_t stream) {
  const std::size_t tiles_per_pair = (2 * run + kTile - 1) / kTile;
  const std::size_t full_pairs = n / (2 * run);
  const std::size_t rest = n - full_pairs * 2 * run;
  const std::size_t tiles = full_pairs * tiles_per_pair + (rest + kTile - 1) / kTile;
  AsyncBuffer<unsigned> splits(tiles, stream);
  partition_kernel<<<static_cast<unsigned>((tiles + kPartitionThreads - 1) / kPartitionThreads),
                     kPartitionThreads, 0, stream>>>(keys_in, n, run, tiles_per_pair, tiles, splits.data());
  CUDALAB_CHECK_LAUNCH();
  merge_kernel<kPairs><<<static_cast<unsigned>(tiles), kThreads, 0, stream>>>(
      keys_in, values_in, n, keys_out, values_out, run, tiles_per_pair, splits.data());
  CUDALAB_CHECK_LAUNCH();
}

}  // namespace

void merge_runs_merge_path(const int* in, std::size_t n, int* out, std::size_t run, cudaStream_t stream) {
  detail::run_merge_runs("merge_runs_merge_path", in, n, out, run, stream, launch<false>);
}

void merge_runs_merge_path(const int* keys_in, const int* values_in, std::size_t n, int* keys_out,
                           int* values_out, std::size_t run, cudaStream_t stream) {
  detail::run_merge_runs("merge_runs_merge_path", keys_in, values_in, n, keys_out, values_out, run, stream,
                         launch<true>);
}

}  // namespace cudalab::sort
