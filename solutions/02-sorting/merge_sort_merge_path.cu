// Exercise 2.7: stable merge sort of any n, keys or key-value pairs:
// block-local sorts of tiles of 17408 keys (fewer where the GPU has less
// shared memory per block), then merge-path passes.
// Lesson: chapters/02-sorting/README.md, "2.7".
// Grade:  tools/grade 2.7      Hints: tools/grade --hint 2.7
#include <cooperative_groups.h>

#include <climits>
#include <cstddef>

#include "cudalab/async_buffer.cuh"
#include "cudalab/device.cuh"
#include "cudalab/error.cuh"
#include "cudalab/merge_path.cuh"
#include "cudalab/merge_tiles.cuh"
#include "cudalab/sort.cuh"

namespace cudalab::sort {
namespace {

namespace cg = cooperative_groups;

constexpr unsigned kItems = 17;                          // keys per thread (odd: no bank conflicts)
constexpr unsigned kMergeThreads = 256;
constexpr unsigned kMergeTile = kMergeThreads * kItems;  // outputs per merge block: 4352
// The block sort's threads (a power of two: it doubles runs up to them) are
// a template parameter, chosen per device from its opt-in shared memory per
// block (sort_threads): 1024 (tiles of 17408 keys) where the tile fits, as
// on the H100, the A100 and the B200; 512 (8704) or 256 (4352 = kMergeTile)
// on GPUs with 99 KiB (RTX 3090, 4090, 5090, L4) or 64 KiB (T4).
constexpr unsigned kMaxSortThreads = 1024;
constexpr unsigned kMinSortThreads = kMergeThreads;  // a tile is at least one merge tile
// Merge blocks per SM that the registers must allow: 5 x 256 threads leave
// 51 registers a thread (ptxas would take 61, and fit only 4 blocks). An SM
// of Turing (sm_75) holds at most 1024 threads, so there 4 is the most that
// __launch_bounds__ may ask for (ptxas rejects 5: "threads per SM ... out of
// range"); every later architecture holds 1536 or 2048 threads.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
constexpr unsigned kMergeMinBlocks = 1024 / kMergeThreads;
#else
constexpr unsigned kMergeMinBlocks = 5;
#endif
constexpr unsigned kPartitionThreads = 128;
// Below this many merge tiles a partition kernel of one thread per split
// has fewer than 256 warps, all waiting on dependent loads, and nothing
// hides their latency: each split is then found by kSearchLanes
// lanes in a (kSearchLanes + 1)-ary search (8 rounds instead of 23 at 2^24
// keys). Above it the grid hides the latency and the extra reads cost more
// than they save.
constexpr std::size_t kWideSearchTiles = 8192;
constexpr unsigned kSearchLanes = 8;
static_assert(kPartitionThreads % kSearchLanes == 0, "a search group never straddles two blocks");

// ---- Given: the merge pass of exercise 2.6, tuned (2.6 is where you write one). ----
// Its searches, merge_path and merge_path_kary, are in cudalab/merge_path.cuh.

// Merges kItems outputs serially from the sorted lists s_keys[ai, a_end) and
// s_keys[bi, b_end) (shared memory; b first only when strictly smaller) into
// keys[] (and the matching s_vals into vals[]). The next key of each list
// waits in a register, so every output costs one shared-memory load. Reads
// stay in [0, limit]: the arrays have one slot past the tile (outputs past
// the end of a partial tile read that slot and are never stored).
template <bool kPairs>
__device__ __forceinline__ void serial_merge(const int* s_keys, const int* s_vals, unsigned ai, unsigned a_end,
                                             unsigned bi, unsigned b_end, unsigned limit, int (&keys)[kItems],
                                             int (&vals)[kItems]) {
  int ka = s_keys[ai < limit ? ai : limit];
  int kb = s_keys[bi < limit ? bi : limit];
#pragma unroll
  for (unsigned v = 0; v < kItems; ++v) {
    const bool take_b = bi < b_end && (ai >= a_end || kb < ka);
    keys[v] = take_b ? kb : ka;
    if constexpr (kPairs) {
      const unsigned from = take_b ? bi : ai;
      vals[v] = s_vals[from < limit ? from : limit];
    }
    if (take_b) {
      ++bi;
      kb = s_keys[bi < limit ? bi : limit];
    } else {
      ++ai;
      ka = s_keys[ai < limit ? ai : limit];
    }
  }
}

// splits[t] = the merge-path split at the first output of merge tile t, by
// kLanes lanes per tile. kLanes = 1: one thread per tile, a binary search in
// global memory (2 loads per step, at most about 54 scattered 32-byte
// sectors per split at 2^28 keys). kLanes = 8: 9-ary search, a third of the
// rounds of dependent loads, about three times the sectors.
template <unsigned kLanes>
__global__ void __launch_bounds__(kPartitionThreads)
    partition_kernel(const int* keys, std::size_t n, std::size_t run, std::size_t tiles_per_pair,
                     std::size_t tiles, unsigned* splits) {
  const auto group = cg::tiled_partition<kLanes>(cg::this_thread_block());
  const std::size_t t = (static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kLanes;
  if (t >= tiles) return;  // the whole group: its lanes share t
  const detail::TileGeometry g = detail::tile_geometry<kMergeTile>(t, n, run, tiles_per_pair);
  const int* a = keys + g.p0;
  if constexpr (kLanes == 1) {
    splits[t] = merge_path(a, g.a_count, a + g.a_count, g.b_count, g.diag0);
  } else {
    const unsigned split = merge_path_kary<kLanes>(group, a, g.a_count, a + g.a_count, g.b_count, g.diag0);
    if (group.thread_rank() == 0) splits[t] = split;
  }
}

// Enqueues the partition kernel of one merge pass (runs of `run` keys of
// keys[0, n) merged pairwise, `tiles` merge tiles in all, tiles_per_pair of
// them per pair of runs): splits[t] for every tile t.
void find_splits(const int* keys, std::size_t n, std::size_t run, std::size_t tiles_per_pair, std::size_t tiles,
                 unsigned* splits, cudaStream_t stream) {
  if (tiles < kWideSearchTiles) {
    const auto blocks = static_cast<unsigned>((tiles * kSearchLanes + kPartitionThreads - 1) / kPartitionThreads);
    partition_kernel<kSearchLanes>
        <<<blocks, kPartitionThreads, 0, stream>>>(keys, n, run, tiles_per_pair, tiles, splits);
  } else {
    const auto blocks = static_cast<unsigned>((tiles + kPartitionThreads - 1) / kPartitionThreads);
    partition_kernel<1><<<blocks, kPartitionThreads, 0, stream>>>(keys, n, run, tiles_per_pair, tiles, splits);
  }
  CUDALAB_CHECK_LAUNCH();
}

// One merge block's work: merges its slices a[a_base, a_base + na) and
// b[b_base + na, b_base + count) into keys_out[out_base, out_base + count):
// kItems loads per thread in flight, a merge from shared memory, coalesced
// stores. kFull: count == kMergeTile (every tile but a pair's last), so no
// bounds checks: 16 % fewer instructions, each pass about 7 % faster
// (Nsight Compute, H100).
template <bool kPairs, bool kFull>
__device__ __forceinline__ void merge_tile(const int* keys_in, const int* values_in, int* keys_out,
                                           int* values_out, int* s_keys, int* s_vals, std::size_t a_base,
                                           std::size_t b_base, unsigned na, unsigned count,
                                           std::size_t out_base) {
  if constexpr (kFull) count = kMergeTile;
  const unsigned t = threadIdx.x;
  // Stage both slices in shared memory, a's then b's: all loads first, then
  // all stores, so that kItems loads per thread are in flight at once.
  int keys[kItems];
  int vals[kItems];
#pragma unroll
  for (unsigned v = 0; v < kItems; ++v) {
    const unsigned i = v * kMergeThreads + t;
    if (kFull || i < count) {
      const std::size_t from = (i < na ? a_base : b_base) + i;
      keys[v] = keys_in[from];
      if constexpr (kPairs) vals[v] = values_in[from];
    }
  }
#pragma unroll
  for (unsigned v = 0; v < kItems; ++v) {
    const unsigned i = v * kMergeThreads + t;
    if (kFull || i < count) {
      s_keys[i] = keys[v];
      if constexpr (kPairs) s_vals[i] = vals[v];
    }
  }
  __syncthreads();
  // This thread's outputs start at diag.
  const unsigned diag = kFull || t * kItems < count ? t * kItems : count;
  const unsigned split = merge_path(s_keys, na, s_keys + na, count - na, diag);
  serial_merge<kPairs>(s_keys, s_vals, split, na, na + diag - split, count, kMergeTile, keys, vals);
  __syncthreads();  // everyone has read the staged slices
#pragma unroll
  for (unsigned v = 0; v < kItems; ++v) {
    if (kFull || diag + v < count) {
      s_keys[diag + v] = keys[v];  // diag = t * kItems here: odd stride, no bank conflicts
      if constexpr (kPairs) s_vals[diag + v] = vals[v];
    }
  }
  __syncthreads();
#pragma unroll
  for (unsigned v = 0; v < kItems; ++v) {
    const unsigned i = v * kMergeThreads + t;
    if (kFull || i < count) {
      keys_out[out_base + i] = s_keys[i];
      if constexpr (kPairs) values_out[out_base + i] = s_vals[i];
    }
  }
}

// Block `tile` merges outputs [diag0, diag1) of its pair of runs, between
// the splits of its tile and of the next.
template <bool kPairs>
__global__ void __launch_bounds__(kMergeThreads, kMergeMinBlocks)
    merge_kernel(const int* keys_in, const int* values_in, std::size_t n, int* keys_out, int* values_out,
                 std::size_t run, std::size_t tiles_per_pair, const unsigned* splits) {
  __shared__ int s_keys[kMergeTile + 1];
  __shared__ int s_vals[kPairs ? kMergeTile + 1 : 1];
  const std::size_t tile = blockIdx.x;
  const detail::TileGeometry g = detail::tile_geometry<kMergeTile>(tile, n, run, tiles_per_pair);
  const unsigned a0 = splits[tile];
  const unsigned a1 = g.diag1 == g.a_count + g.b_count ? g.a_count : splits[tile + 1];
  const unsigned na = a1 - a0;
  const unsigned count = g.diag1 - g.diag0;  // na + the number of b's keys
  const std::size_t a_base = g.p0 + a0;
  const std::size_t b_base = g.p0 + g.a_count + (g.diag0 - a0) - na;  // b_base + i for i >= na
  const std::size_t out_base = g.p0 + g.diag0;
  if (count == kMergeTile) {
    merge_tile<kPairs, true>(keys_in, values_in, keys_out, values_out, s_keys, s_vals, a_base, b_base, na, count,
                             out_base);
  } else {
    merge_tile<kPairs, false>(keys_in, values_in, keys_out, values_out, s_keys, s_vals, a_base, b_base, na,
                              count, out_base);
  }
}

// ---- The block sort: what you write in 2.7. ----

__device__ __forceinline__ void swap_ints(int& a, int& b) {
  const int t = a;
  a = b;
  b = t;
}

// Block b of kSortThreads threads sorts tile b (keys [b * kSortTile,
// min(n, (b + 1) * kSortTile)), kSortTile = kSortThreads * kItems)
// stably: padded with INT_MAX (values 0) to kSortTile keys, each thread sorts
// its kItems consecutive keys in registers, then runs of kItems,
// 2 kItems, ..., kSortTile / 2 keys are merged pairwise in shared memory,
// every thread producing kItems outputs found by a merge-path search.
// Shared memory (dynamic): kSortTile + 1 keys, then as many values for pairs.
template <bool kPairs, unsigned kSortThreads>
__global__ void __launch_bounds__(kSortThreads)
    block_sort_kernel(const int* keys_in, const int* values_in, std::size_t n, int* keys_out,
                      int* values_out) {
  constexpr unsigned kSortTile = kSortThreads * kItems;  // keys per block sort: 17408 with 1024 threads
  static_assert(kSortTile % kMergeTile == 0, "every run (a multiple of kSortTile) is whole merge tiles");
  extern __shared__ int s_mem[];
  int* s_keys = s_mem;
  int* s_vals = s_mem + kSortTile + 1;
  const unsigned t = threadIdx.x;
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * kSortTile;
  const unsigned count = n - base < kSortTile ? static_cast<unsigned>(n - base) : kSortTile;
  int keys[kItems];
  int vals[kItems];
  // Coalesced load (element v * kSortThreads + t), all loads in flight at
  // once, through shared memory to the blocked layout (element t * kItems + v).
  // The padding keys are the largest and come last in the input order, so
  // the stable sort keeps them last.
#pragma unroll
  for (unsigned v = 0; v < kItems; ++v) {
    const unsigned i = v * kSortThreads + t;
    keys[v] = i < count ? keys_in[base + i] : INT_MAX;
    if constexpr (kPairs) vals[v] = i < count ? values_in[base + i] : 0;
  }
#pragma unroll
  for (unsigned v = 0; v < kItems; ++v) {
    s_keys[v * kSortThreads + t] = keys[v];
    if constexpr (kPairs) s_vals[v * kSortThreads + t] = vals[v];
  }
  if (t == 0) s_keys[kSortTile] = INT_MAX;  // the slot serial_merge may peek at
  if (kPairs && t == 0) s_vals[kSortTile] = 0;
  __syncthreads();
#pragma unroll
  for (unsigned v = 0; v < kItems; ++v) {
    keys[v] = s_keys[t * kItems + v];
    if constexpr (kPairs) vals[v] = s_vals[t * kItems + v];
  }
  // BEGIN SOLUTION
  // Odd-even transposition sort of the thread's keys; swapping only on a
  // strict "less" keeps equal keys in order (stable).
#pragma unroll
  for (unsigned phase = 0; phase < kItems; ++phase) {
#pragma unroll
    for (unsigned v = phase & 1; v + 1 < kItems; v += 2) {
      if (keys[v + 1] < keys[v]) {
        swap_ints(keys[v], keys[v + 1]);
        if constexpr (kPairs) swap_ints(vals[v], vals[v + 1]);
      }
    }
  }
  // Merge runs of coop / 2 threads' keys pairwise: coop threads share one merge.
  for (unsigned coop = 2; coop <= kSortThreads; coop *= 2) {
    __syncthreads();  // the previous round's reads of shared memory are done
#pragma unroll
    for (unsigned v = 0; v < kItems; ++v) {
      s_keys[t * kItems + v] = keys[v];
      if constexpr (kPairs) s_vals[t * kItems + v] = vals[v];
    }
    __syncthreads();
    const unsigned first = (t & ~(coop - 1)) * kItems;  // the merge's first key
    const unsigned half = coop / 2 * kItems;            // the length of each run
    const unsigned diag = (t & (coop - 1)) * kItems;    // this thread's first output
    const unsigned split = merge_path(s_keys + first, half, s_keys + first + half, half, diag);
    serial_merge<kPairs>(s_keys, s_vals, first + split, first + half, first + half + diag - split,
                         first + 2 * half, kSortTile, keys, vals);
  }
  // STARTER:
  // // TODO(2.7): sort the kItems keys in registers (stably: swap only when
  // // strictly smaller, values with their keys); then for coop = 2, 4, ...,
  // // kSortThreads: store the registers to s_keys[t * kItems + v] (barriers
  // // before and after), find this thread's split of the merge of the two
  // // runs of coop / 2 * kItems keys that start at (t & ~(coop - 1)) * kItems
  // // with merge_path, and merge kItems keys back into the registers with
  // // serial_merge (limit kSortTile).
  // END SOLUTION
  __syncthreads();
#pragma unroll
  for (unsigned v = 0; v < kItems; ++v) {
    s_keys[t * kItems + v] = keys[v];
    if constexpr (kPairs) s_vals[t * kItems + v] = vals[v];
  }
  __syncthreads();
#pragma unroll
  for (unsigned v = 0; v < kItems; ++v) {
    const unsigned i = v * kSortThreads + t;
    if (i < count) {
      keys_out[base + i] = s_keys[i];
      if constexpr (kPairs) values_out[base + i] = s_vals[i];
    }
  }
}

// Dynamic shared memory of a block sort of `threads` threads: a tile of keys
// and the slot past it, then as many values for pairs.
template <bool kPairs>
constexpr std::size_t sort_shared_bytes(unsigned threads) {
  return (kPairs ? 2 : 1) * (static_cast<std::size_t>(threads) * kItems + 1) * sizeof(int);
}

// The block sort's threads on this device: the most, from kMaxSortThreads
// down, whose tile fits its opt-in shared memory per block
// (device_limits(), the profile's under CUDALAB_DEVICE_PROFILE). 1024 threads
// take 68 KiB for keys and 136 KiB for pairs, 512 half and 256 a quarter of
// that (34 KiB for pairs: within the 48 KiB every GPU gives).
template <bool kPairs>
unsigned sort_threads() {
  const std::size_t optin = device_limits().shared_per_block_optin;
  unsigned threads = kMaxSortThreads;
  while (threads > kMinSortThreads && sort_shared_bytes<kPairs>(threads) > optin) threads /= 2;
  return threads;
}

// Enqueues the block sort with kSortThreads threads per block.
template <bool kPairs, unsigned kSortThreads>
void block_sort(const int* keys_in, const int* values_in, std::size_t n, int* keys_out, int* values_out,
                cudaStream_t stream) {
  constexpr std::size_t smem = sort_shared_bytes<kPairs>(kSortThreads);  // 68 KiB, 136 KiB for pairs at 1024
  constexpr std::size_t tile = static_cast<std::size_t>(kSortThreads) * kItems;
  set_dynamic_shared(block_sort_kernel<kPairs, kSortThreads>, smem);
  block_sort_kernel<kPairs, kSortThreads><<<static_cast<unsigned>((n + tile - 1) / tile), kSortThreads, smem,
                                            stream>>>(keys_in, values_in, n, keys_out, values_out);
  CUDALAB_CHECK_LAUNCH();
}

template <bool kPairs>
void sort(const int* keys_in, const int* values_in, std::size_t n, int* keys_out, int* values_out,
          cudaStream_t stream) {
  if (n == 0) return;
  const unsigned threads = sort_threads<kPairs>();
  const std::size_t sort_tile = static_cast<std::size_t>(threads) * kItems;  // 17408 keys on the H100
  const std::size_t tiles = (n + kMergeTile - 1) / kMergeTile;  // merge tiles
  int passes = 0;
  for (std::size_t run = sort_tile; run < n; run *= 2) ++passes;
  // Ping-pong between out and scratch; the block sort writes where an even
  // number of passes later lands in out. The pool keeps the scratch mapped
  // after the call (its release threshold is raised to it), as CUB's callers
  // keep their temporary storage: mapping 1 GiB anew at 2^28 keys costs
  // about 1 ms, a fifteenth of the sort.
  cudalab::detail::keep_pool_memory((kPairs ? 2 : 1) * n * sizeof(int) + tiles * sizeof(unsigned));
  AsyncBuffer<int> keys_tmp(passes > 0 ? n : 0, stream);
  AsyncBuffer<int> values_tmp(kPairs && passes > 0 ? n : 0, stream);
  AsyncBuffer<unsigned> splits(passes > 0 ? tiles : 0, stream);
  int* k_dst = passes % 2 == 0 ? keys_out : keys_tmp.data();
  int* v_dst = passes % 2 == 0 ? values_out : values_tmp.data();
  if (threads == 1024) {
    block_sort<kPairs, 1024>(keys_in, values_in, n, k_dst, v_dst, stream);
  } else if (threads == 512) {
    block_sort<kPairs, 512>(keys_in, values_in, n, k_dst, v_dst, stream);
  } else {
    block_sort<kPairs, kMinSortThreads>(keys_in, values_in, n, k_dst, v_dst, stream);
  }
  int* k_src = k_dst;
  int* v_src = v_dst;
  // BEGIN SOLUTION
  for (std::size_t run = sort_tile; run < n; run *= 2) {
    k_dst = k_src == keys_out ? keys_tmp.data() : keys_out;
    v_dst = v_src == values_out ? values_tmp.data() : values_out;
    const std::size_t tiles_per_pair = 2 * run / kMergeTile;  // run is a multiple of sort_tile
    find_splits(k_src, n, run, tiles_per_pair, tiles, splits.data(), stream);
    merge_kernel<kPairs><<<static_cast<unsigned>(tiles), kMergeThreads, 0, stream>>>(
        k_src, v_src, n, k_dst, v_dst, run, tiles_per_pair, splits.data());
    CUDALAB_CHECK_LAUNCH();
    k_src = k_dst;
    v_src = v_dst;
  }
  // STARTER:
  // // TODO(2.7): the merge passes: for run = sort_tile, 2 sort_tile, ... while
  // // run < n, find the splits of the pass's merge tiles with find_splits and
  // // launch merge_kernel<kPairs> (one block of kMergeThreads per merge tile)
  // // from (k_src, v_src) into the other buffer, then swap.
  // END SOLUTION
}

}  // namespace

void merge_sort_merge_path(const int* in, std::size_t n, int* out, cudaStream_t stream) {
  detail::check_sort_arguments("merge_sort_merge_path", in, n, out);
  sort<false>(in, nullptr, n, out, nullptr, stream);
}

void merge_sort_merge_path(const int* keys_in, const int* values_in, std::size_t n, int* keys_out,
                           int* values_out, cudaStream_t stream) {
  detail::check_sort_arguments("merge_sort_merge_path", keys_in, n, keys_out);
  detail::check_sort_arguments("merge_sort_merge_path", values_in, n, values_out);
  sort<true>(keys_in, values_in, n, keys_out, values_out, stream);
}

}  // namespace cudalab::sort
