// Exercise 7.3: classification and counting: broadcast each active node to
// its points by a segmented scan, flag every point left (0) or right (1),
// and count each node's right points by a segmented scan of the flags.
// Lesson: chapters/07-kdtree-large-nodes/README.md, "7.3".
// Grade:  tools/grade 7.3      Hints: tools/grade --hint 7.3
#include <cstddef>
#include <cstdint>

#include "cudalab/args.hpp"
#include "cudalab/async_buffer.cuh"
#include "cudalab/error.cuh"
#include "cudalab/kdtree.cuh"
#include "cudalab/warp.cuh"

namespace cudalab::kdtree {
namespace {

// The segmented scan, which 7.4 and 7.6 call through segmented_inclusive_sum
// and mark_segment_heads (cudalab/kdtree.cuh).

constexpr int kBlock = 256;                    // threads of the tile scan
constexpr int kItems = 4;                      // consecutive elements per thread
constexpr int kTile = kBlock * kItems;         // 1024 elements per tile
constexpr int kCarryBlock = 1024;              // threads of the scan of the tile totals

// An element of the segmented scan: a head flag and a value (Schwartz's
// segmented operator lifts + to these pairs).
struct Seg {
  unsigned flag;
  std::uint32_t value;
};

// a ⊕ b, a before b: a head in b restarts the sum.
__device__ __forceinline__ Seg combine(Seg a, Seg b) {
  // BEGIN SOLUTION
  return {a.flag | b.flag, b.flag ? b.value : a.value + b.value};
  // STARTER:
  // // TODO(7.3): the segmented operator: the flags or-ed; the value is b's
  // // alone when b holds a head, else the sum of both.
  // return b;
  // END SOLUTION
}

// Inclusive scan of one Seg per lane of a full warp.
__device__ __forceinline__ Seg warp_inclusive_scan(Seg x) {
  const unsigned lane = lane_id();
  // BEGIN SOLUTION
  for (int offset = 1; offset < 32; offset *= 2) {
    const Seg up{__shfl_up_sync(kFullMask, x.flag, offset), __shfl_up_sync(kFullMask, x.value, offset)};
    if (lane >= static_cast<unsigned>(offset)) x = combine(up, x);
  }
  return x;
  // STARTER:
  // // TODO(7.3): log2(32) steps of __shfl_up_sync (flag and value) with
  // // offsets 1, 2, 4, 8, 16; a lane at or past the offset combines the
  // // value from below (the earlier one, on the left of combine) with its own.
  // return x;
  // END SOLUTION
}

// Exclusive scan of one Seg per thread of the block (blockDim.x = kThreads,
// a multiple of 32): returns the combination of the threads before this one
// (identity {0, 0} for thread 0) and sets `total` to the whole block's.
template <int kThreads>
__device__ Seg block_exclusive_scan(Seg x, Seg& total) {
  __shared__ Seg warp_totals[kThreads / 32];
  const unsigned lane = lane_id(), warp = warp_id();
  const Seg inclusive = warp_inclusive_scan(x);
  Seg exclusive{__shfl_up_sync(kFullMask, inclusive.flag, 1), __shfl_up_sync(kFullMask, inclusive.value, 1)};
  if (lane == 0) exclusive = Seg{0u, 0u};
  if (lane == 31) warp_totals[warp] = inclusive;
  __syncthreads();
  if (warp == 0) {
    const Seg t = lane < kThreads / 32 ? warp_totals[lane] : Seg{0u, 0u};
    const Seg t_inclusive = warp_inclusive_scan(t);
    Seg t_exclusive{__shfl_up_sync(kFullMask, t_inclusive.flag, 1), __shfl_up_sync(kFullMask, t_inclusive.value, 1)};
    if (lane == 0) t_exclusive = Seg{0u, 0u};
    __syncwarp();
    if (lane < kThreads / 32) warp_totals[lane] = t_exclusive;  // now each warp's exclusive prefix
    if (lane == kThreads / 32 - 1) x = t_inclusive;             // borrow x to carry the block total
  }
  __syncthreads();
  const Seg prefix = combine(warp_totals[warp], exclusive);
  __shared__ Seg block_total;
  if (threadIdx.x == kThreads / 32 - 1) block_total = x;
  __syncthreads();
  total = block_total;
  __syncthreads();  // the shared words are reused by the next call
  return prefix;
}

// Pass 1: the scan of each tile of kTile elements on its own; tile_totals[t]
// = the combination of the tile's elements, first_heads[t] = the position in
// the tile of its first head (kTile when it has none): pass 3 adds the carry
// to the positions before it, and reads nothing else.
// in and out may be the same array (each thread reads its elements before it writes them).
__global__ void tile_scan_kernel(const std::uint32_t* in, const std::uint8_t* __restrict__ heads, std::size_t n,
                                 std::uint32_t* out, Seg* __restrict__ tile_totals,
                                 unsigned* __restrict__ first_heads) {
  const std::size_t base = blockIdx.x * static_cast<std::size_t>(kTile) + threadIdx.x * static_cast<std::size_t>(kItems);
  Seg items[kItems];
  unsigned own_heads = 0;  // bit j: element j of this thread is a head
  Seg running{0u, 0u};
  for (int j = 0; j < kItems; ++j) {
    const std::size_t i = base + j;
    const Seg x = i < n ? Seg{heads[i] != 0 ? 1u : 0u, in[i]} : Seg{0u, 0u};
    own_heads |= x.flag << j;
    running = j == 0 ? x : combine(running, x);
    items[j] = running;
  }
  Seg total;
  const Seg prefix = block_exclusive_scan<kBlock>(running, total);
  unsigned head_before = prefix.flag;  // a head earlier in the tile
  for (int j = 0; j < kItems; ++j) {
    const std::size_t i = base + j;
    if ((own_heads >> j & 1u) != 0 && head_before == 0)  // the tile's first head: one writer
      first_heads[blockIdx.x] = threadIdx.x * kItems + j;
    const Seg inclusive = combine(prefix, items[j]);
    head_before = inclusive.flag;
    if (i < n) out[i] = inclusive.value;
  }
  if (threadIdx.x == 0) {
    tile_totals[blockIdx.x] = total;
    if (total.flag == 0) first_heads[blockIdx.x] = kTile;
  }
}

// Pass 2: one block scans the tile totals (exclusively) in chunks of
// kCarryBlock, carrying across chunks: carries[t] = what the tiles before t add to the first elements of t.
__global__ void carry_kernel(const Seg* __restrict__ tile_totals, std::size_t tiles, std::uint32_t* __restrict__ carries) {
  Seg carry{0u, 0u};
  for (std::size_t base = 0; base < tiles; base += kCarryBlock) {
    const std::size_t t = base + threadIdx.x;
    const Seg x = t < tiles ? tile_totals[t] : Seg{0u, 0u};
    Seg total;
    const Seg prefix = block_exclusive_scan<kCarryBlock>(x, total);
    if (t < tiles) carries[t] = combine(carry, prefix).value;
    carry = combine(carry, total);
  }
}

// Pass 3: the elements of tile t before its first head receive carries[t].
__global__ void fixup_kernel(std::size_t n, const std::uint32_t* __restrict__ carries,
                             const unsigned* __restrict__ first_heads, std::uint32_t* __restrict__ out) {
  const std::uint32_t carry = carries[blockIdx.x];
  if (carry == 0) return;
  const std::size_t tile_base = blockIdx.x * static_cast<std::size_t>(kTile);
  const unsigned stop = first_heads[blockIdx.x];
  for (unsigned j = threadIdx.x; j < stop; j += kBlock) {
    const std::size_t i = tile_base + j;
    if (i < n) out[i] += carry;
  }
}

// Marks the first position of every active node's segment: heads[b] = 1 and
// owners[b] = k (the arrays are zero elsewhere; owners may be null); a
// segmented sum of owners then broadcasts k over segment k.
__global__ void mark_heads_kernel(const Node* __restrict__ nodes, const int* __restrict__ active, std::size_t m,
                                  std::uint8_t* __restrict__ heads, std::uint32_t* __restrict__ owners) {
  const std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (k >= m) return;
  const unsigned b = nodes[active[k]].begin;
  heads[b] = 1;
  if (owners != nullptr) owners[b] = static_cast<std::uint32_t>(k);
}

}  // namespace

void segmented_inclusive_sum(const std::uint32_t* in, const std::uint8_t* heads, std::size_t n,
                             std::uint32_t* out, cudaStream_t stream) {
  require_count_at_most("segmented_inclusive_sum", n, max_points);
  require_pointer("segmented_inclusive_sum", "in", in, n);
  require_pointer("segmented_inclusive_sum", "heads", heads, n);
  require_pointer("segmented_inclusive_sum", "out", out, n);
  if (n == 0) return;
  const std::size_t tiles = (n + kTile - 1) / kTile;
  AsyncBuffer<Seg> tile_totals(tiles, stream);
  AsyncBuffer<std::uint32_t> carries(tiles, stream);
  AsyncBuffer<unsigned> first_heads(tiles, stream);
  tile_scan_kernel<<<static_cast<unsigned>(tiles), kBlock, 0, stream>>>(in, heads, n, out, tile_totals.data(),
                                                                        first_heads.data());
  CUDALAB_CHECK_LAUNCH();
  carry_kernel<<<1, kCarryBlock, 0, stream>>>(tile_totals.data(), tiles, carries.data());
  CUDALAB_CHECK_LAUNCH();
  fixup_kernel<<<static_cast<unsigned>(tiles), kBlock, 0, stream>>>(n, carries.data(), first_heads.data(), out);
  CUDALAB_CHECK_LAUNCH();
}

void mark_segment_heads(const Node* nodes, const int* active, std::size_t m, std::uint8_t* heads,
                        std::uint32_t* owners, cudaStream_t stream) {
  require_count_at_most("mark_segment_heads", m, max_points);
  require_pointer("mark_segment_heads", "nodes", nodes, m);
  require_pointer("mark_segment_heads", "active", active, m);
  require_pointer("mark_segment_heads", "heads", heads, m);
  if (m == 0) return;
  const auto node_blocks = static_cast<unsigned>((m + kBlock - 1) / kBlock);
  mark_heads_kernel<<<node_blocks, kBlock, 0, stream>>>(nodes, active, m, heads, owners);
  CUDALAB_CHECK_LAUNCH();
}

namespace {

__device__ __forceinline__ float coordinate(const float3& p, int axis) {
  return axis == 0 ? p.x : (axis == 1 ? p.y : p.z);
}

// Position i: its node is active[owner[i]]; flag it right when the point's
// coordinate on the node's axis is at least the split.
__global__ void classify_kernel(const float3* __restrict__ points, const std::uint32_t* __restrict__ idx,
                                std::size_t n, const Node* __restrict__ nodes, const int* __restrict__ active,
                                const std::uint32_t* __restrict__ owner, std::uint8_t* __restrict__ right_flags,
                                std::uint32_t* __restrict__ right_values) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  // BEGIN SOLUTION
  const Node& node = nodes[active[owner[i]]];
  const unsigned right = coordinate(points[idx[i]], node.axis) >= node.split ? 1u : 0u;
  right_flags[i] = static_cast<std::uint8_t>(right);
  right_values[i] = right;
  // STARTER:
  // // TODO(7.3): the node of position i is nodes[active[owner[i]]]; right =
  // // coordinate(points[idx[i]], node.axis) >= node.split. Write it to
  // // right_flags[i] (for the caller) and right_values[i] (for the scan).
  // END SOLUTION
}

// Thread k reads the inclusive scan of the flags at the last position of segment k.
__global__ void count_kernel(const Node* __restrict__ nodes, const int* __restrict__ active, std::size_t m,
                             const std::uint32_t* __restrict__ right_ranks, std::uint32_t* __restrict__ right_counts) {
  const std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (k >= m) return;
  // BEGIN SOLUTION
  const Node& node = nodes[active[k]];
  right_counts[k] = right_ranks[node.begin + node.count - 1];
  // STARTER:
  // // TODO(7.3): right_counts[k] = the scanned flags at the segment's last
  // // position, begin + count - 1 of nodes[active[k]].
  // END SOLUTION
}

}  // namespace

void classify_and_count(const float3* points, const std::uint32_t* idx, std::size_t n, const Node* nodes,
                        const int* active, std::size_t m, std::uint8_t* right_flags, std::uint32_t* right_counts,
                        cudaStream_t stream, std::uint32_t* owners) {
  detail::check_level("classify_and_count", n, nodes, active, m);
  require_pointer("classify_and_count", "points", points, n);
  require_pointer("classify_and_count", "idx", idx, n);
  require_pointer("classify_and_count", "right_flags", right_flags, n);
  require_pointer("classify_and_count", "right_counts", right_counts, m);
  if (n == 0) return;
  AsyncBuffer<std::uint8_t> heads(n, stream);
  // k at each segment's head, then k everywhere in it: the caller's array when it wants the broadcast
  AsyncBuffer<std::uint32_t> own_owners(owners == nullptr ? n : 0, stream);
  if (owners == nullptr) owners = own_owners.data();
  AsyncBuffer<std::uint32_t> values(n, stream);  // the flags as scan input, then their segmented sums
  CUDALAB_CHECK(cudaMemsetAsync(heads.data(), 0, n, stream));
  CUDALAB_CHECK(cudaMemsetAsync(owners, 0, n * sizeof(std::uint32_t), stream));
  const auto node_blocks = static_cast<unsigned>((m + kBlock - 1) / kBlock);
  mark_heads_kernel<<<node_blocks, kBlock, 0, stream>>>(nodes, active, m, heads.data(), owners);
  CUDALAB_CHECK_LAUNCH();
  segmented_inclusive_sum(owners, heads.data(), n, owners, stream);  // in place: broadcast
  const auto blocks = static_cast<unsigned>((n + kBlock - 1) / kBlock);
  classify_kernel<<<blocks, kBlock, 0, stream>>>(points, idx, n, nodes, active, owners, right_flags, values.data());
  CUDALAB_CHECK_LAUNCH();
  segmented_inclusive_sum(values.data(), heads.data(), n, values.data(), stream);  // in place: ranks
  count_kernel<<<node_blocks, kBlock, 0, stream>>>(nodes, active, m, values.data(), right_counts);
  CUDALAB_CHECK_LAUNCH();
}

}  // namespace cudalab::kdtree
