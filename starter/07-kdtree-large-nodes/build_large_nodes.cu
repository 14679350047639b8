// Exercise 7.6: the large-node stage: levels of large nodes split, with the
// active and next lists swapped, until no large node remains.
// Lesson: chapters/07-kdtree-large-nodes/README.md, "7.6".
// Grade:  tools/grade 7.6      Hints: tools/grade --hint 7.6
//
// Given (outside the exercise), so that this file stands alone: the
// solutions of 7.1 to 7.5, each in a namespace given_<slug> (generated from
// solutions/07-kdtree-large-nodes/*.cu by chapters/07-kdtree-large-nodes/tools/given_code.py,
// which a host test runs with --check), and the kernels that start the stage and move the points.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

#include "cudalab/args.hpp"
#include "cudalab/async_buffer.cuh"
#include "cudalab/error.cuh"
#include "cudalab/kdtree.cuh"
#include "cudalab/timer.cuh"

namespace cudalab::kdtree {
namespace {

// ---- given: the solution of bounding_box ----
namespace given_bounding_box {

namespace {

constexpr int kBlock = 256;
constexpr unsigned kMaxBlocks = 1024;  // partials reduced by one block of kMaxBlocks threads
constexpr unsigned kFullMask = 0xffffffffu;

// The reduction's element: a box and the smallest bad index seen.
struct Partial {
  float3 lo, hi;
  std::uint64_t bad;
};

__device__ __forceinline__ Partial identity(std::uint64_t n) {
  const float inf = __int_as_float(0x7f800000);
  return {{inf, inf, inf}, {-inf, -inf, -inf}, n};
}

// The operator: componentwise min of lo, max of hi, min of bad. Exact, so
// associative and commutative: any reduction order gives the same bits.
__device__ __forceinline__ Partial combine(const Partial& a, const Partial& b) {
  return {{fminf(a.lo.x, b.lo.x), fminf(a.lo.y, b.lo.y), fminf(a.lo.z, b.lo.z)},
          {fmaxf(a.hi.x, b.hi.x), fmaxf(a.hi.y, b.hi.y), fmaxf(a.hi.z, b.hi.z)},
          a.bad < b.bad ? a.bad : b.bad};
}

__device__ __forceinline__ Partial shfl_down(const Partial& v, int offset) {
  Partial r;
  r.lo.x = __shfl_down_sync(kFullMask, v.lo.x, offset);
  r.lo.y = __shfl_down_sync(kFullMask, v.lo.y, offset);
  r.lo.z = __shfl_down_sync(kFullMask, v.lo.z, offset);
  r.hi.x = __shfl_down_sync(kFullMask, v.hi.x, offset);
  r.hi.y = __shfl_down_sync(kFullMask, v.hi.y, offset);
  r.hi.z = __shfl_down_sync(kFullMask, v.hi.z, offset);
  r.bad = __shfl_down_sync(kFullMask, v.bad, offset);
  return r;
}

// Block-wide reduction of one Partial per thread; the result is valid in
// thread 0. blockDim.x is a multiple of 32, at most 1024.
__device__ Partial block_reduce(Partial v, std::uint64_t n) {
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  __shared__ Partial warp_totals[32];
  for (int offset = 16; offset > 0; offset /= 2) v = combine(v, shfl_down(v, offset));
  if (lane == 0) warp_totals[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < blockDim.x / 32 ? warp_totals[lane] : identity(n);
    for (int offset = 16; offset > 0; offset /= 2) v = combine(v, shfl_down(v, offset));
  }
  return v;
}

// Pass 1: every block reduces a grid-stride share of the points into partials[blockIdx.x].
__global__ void partial_boxes_kernel(const float3* __restrict__ points, std::uint64_t n, Partial* partials) {
  Partial acc = identity(n);
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
    const float3 p = points[i];
    if (isfinite(p.x) && isfinite(p.y) && isfinite(p.z)) {
      acc = combine(acc, Partial{p, p, n});
    } else if (i < acc.bad) {
      acc.bad = i;
    }
  }
  acc = block_reduce(acc, n);
  if (threadIdx.x == 0) partials[blockIdx.x] = acc;
}

// Pass 2: one block reduces the partials and writes the results.
__global__ void final_box_kernel(const Partial* __restrict__ partials, unsigned count, std::uint64_t n, Box* box,
                                 std::uint64_t* first_bad) {
  Partial acc = identity(n);
  for (unsigned i = threadIdx.x; i < count; i += blockDim.x) acc = combine(acc, partials[i]);
  acc = block_reduce(acc, n);
  if (threadIdx.x == 0) {
    *box = Box{acc.lo, acc.hi};
    *first_bad = acc.bad;
  }
}

}  // namespace

void bounding_box(const float3* points, std::size_t n, Box* box, std::uint64_t* first_bad, cudaStream_t stream) {
  require_count_at_most("bounding_box", n, max_points);
  require_pointer("bounding_box", "points", points, n);
  require_pointer("bounding_box", "box", box, 1);
  require_pointer("bounding_box", "first_bad", first_bad, 1);
  const std::size_t wanted = (n + 4 * kBlock - 1) / (4 * kBlock);  // about 4 points per thread at least
  const unsigned blocks = static_cast<unsigned>(wanted == 0 ? 1 : (wanted < kMaxBlocks ? wanted : kMaxBlocks));
  AsyncBuffer<Partial> partials(blocks, stream);
  partial_boxes_kernel<<<blocks, kBlock, 0, stream>>>(points, n, partials.data());
  CUDALAB_CHECK_LAUNCH();
  final_box_kernel<<<1, kMaxBlocks, 0, stream>>>(partials.data(), blocks, n, box, first_bad);
  CUDALAB_CHECK_LAUNCH();
}

}  // namespace given_bounding_box

// ---- given: the solution of select_splits ----
namespace given_select_splits {

namespace {

constexpr int kBlock = 256;

// Thread k chooses the split of nodes[active[k]].
__global__ void select_splits_kernel(Node* nodes, const int* __restrict__ active, std::size_t m) {
  const std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (k >= m) return;
  Node& node = nodes[active[k]];
  const Box box = node.box;
  const float lo[3] = {box.lo.x, box.lo.y, box.lo.z};
  const float hi[3] = {box.hi.x, box.hi.y, box.hi.z};
  int axis = 0;
  float longest = hi[0] - lo[0];
  for (int a = 1; a < 3; ++a) {
    const float e = hi[a] - lo[a];
    if (e > longest) {  // strictly longer: ties keep the lower axis
      longest = e;
      axis = a;
    }
  }
  // Halve before adding: no overflow near FLT_MAX, and __fmul_rn keeps nvcc
  // from fusing a product into the sum (the CPU reference rounds both).
  node.axis = axis;
  node.split = __fmul_rn(0.5f, lo[axis]) + __fmul_rn(0.5f, hi[axis]);
}

}  // namespace

void select_splits(Node* nodes, const int* active, std::size_t m, cudaStream_t stream) {
  require_count_at_most("select_splits", m, max_points);
  require_pointer("select_splits", "nodes", nodes, m);
  require_pointer("select_splits", "active", active, m);
  if (m == 0) return;
  const auto blocks = static_cast<unsigned>((m + kBlock - 1) / kBlock);
  select_splits_kernel<<<blocks, kBlock, 0, stream>>>(nodes, active, m);
  CUDALAB_CHECK_LAUNCH();
}

}  // namespace given_select_splits

// ---- given: the solution of classify_and_count ----
namespace given_classify_and_count {

namespace {

constexpr int kBlock = 256;                    // threads of the tile scan
constexpr int kItems = 4;                      // consecutive elements per thread
constexpr int kTile = kBlock * kItems;         // 1024 elements per tile
constexpr int kCarryBlock = 1024;              // threads of the scan of the tile totals
constexpr unsigned kFullMask = 0xffffffffu;

// An element of the segmented scan: a head flag and a value (Schwartz's
// segmented operator lifts + to these pairs).
struct Seg {
  unsigned flag;
  std::uint32_t value;
};

// a ⊕ b, a before b: a head in b restarts the sum.
__device__ __forceinline__ Seg combine(Seg a, Seg b) {
  return {a.flag | b.flag, b.flag ? b.value : a.value + b.value};
}

// Inclusive scan of one Seg per lane of a full warp.
__device__ __forceinline__ Seg warp_inclusive_scan(Seg x) {
  const unsigned lane = threadIdx.x % 32;
  for (int offset = 1; offset < 32; offset *= 2) {
    const Seg up{__shfl_up_sync(kFullMask, x.flag, offset), __shfl_up_sync(kFullMask, x.value, offset)};
    if (lane >= static_cast<unsigned>(offset)) x = combine(up, x);
  }
  return x;
}

// Exclusive scan of one Seg per thread of the block (blockDim.x = kThreads,
// a multiple of 32): returns the combination of the threads before this one
// (identity {0, 0} for thread 0) and sets `total` to the whole block's.
template <int kThreads>
__device__ Seg block_exclusive_scan(Seg x, Seg& total) {
  __shared__ Seg warp_totals[kThreads / 32];
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
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

// The segmented inclusive sum of in[0 .. n) (segments start where heads[i]
// != 0; element 0 always starts one) into out, which may be in itself.
void segmented_inclusive_sum(const std::uint32_t* in, const std::uint8_t* heads, std::size_t n,
                             std::uint32_t* out, cudaStream_t stream) {
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
  const Node& node = nodes[active[owner[i]]];
  const unsigned right = coordinate(points[idx[i]], node.axis) >= node.split ? 1u : 0u;
  right_flags[i] = static_cast<std::uint8_t>(right);
  right_values[i] = right;
}

// Thread k reads the inclusive scan of the flags at the last position of segment k.
__global__ void count_kernel(const Node* __restrict__ nodes, const int* __restrict__ active, std::size_t m,
                             const std::uint32_t* __restrict__ right_ranks, std::uint32_t* __restrict__ right_counts) {
  const std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (k >= m) return;
  const Node& node = nodes[active[k]];
  right_counts[k] = right_ranks[node.begin + node.count - 1];
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

}  // namespace given_classify_and_count

// ---- given: the solution of segmented_split ----
namespace given_segmented_split {

namespace {

constexpr int kBlock = 256;                    // threads of the tile scan
constexpr int kItems = 4;                      // consecutive elements per thread
constexpr int kTile = kBlock * kItems;         // 1024 elements per tile
constexpr int kCarryBlock = 1024;              // threads of the scan of the tile totals
constexpr unsigned kFullMask = 0xffffffffu;

// An element of the segmented scan: a head flag and a value (Schwartz's
// segmented operator lifts + to these pairs).
struct Seg {
  unsigned flag;
  std::uint32_t value;
};

// a ⊕ b, a before b: a head in b restarts the sum.
__device__ __forceinline__ Seg combine(Seg a, Seg b) {
  return {a.flag | b.flag, b.flag ? b.value : a.value + b.value};
}

// Inclusive scan of one Seg per lane of a full warp.
__device__ __forceinline__ Seg warp_inclusive_scan(Seg x) {
  const unsigned lane = threadIdx.x % 32;
  for (int offset = 1; offset < 32; offset *= 2) {
    const Seg up{__shfl_up_sync(kFullMask, x.flag, offset), __shfl_up_sync(kFullMask, x.value, offset)};
    if (lane >= static_cast<unsigned>(offset)) x = combine(up, x);
  }
  return x;
}

// Exclusive scan of one Seg per thread of the block (blockDim.x = kThreads,
// a multiple of 32): returns the combination of the threads before this one
// (identity {0, 0} for thread 0) and sets `total` to the whole block's.
template <int kThreads>
__device__ Seg block_exclusive_scan(Seg x, Seg& total) {
  __shared__ Seg warp_totals[kThreads / 32];
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
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

// The segmented inclusive sum of in[0 .. n) (segments start where heads[i]
// != 0; element 0 always starts one) into out, which may be in itself.
void segmented_inclusive_sum(const std::uint32_t* in, const std::uint8_t* heads, std::size_t n,
                             std::uint32_t* out, cudaStream_t stream) {
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

// Given: the flags as 32-bit scan input.
__global__ void widen_kernel(const std::uint8_t* __restrict__ flags, std::size_t n, std::uint32_t* __restrict__ out) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = flags[i];
}

// Position i of segment k = owner[i], whose node has begin b and count c:
// right_ranks[i] is the number of right entries in [b, i] (a segmented
// inclusive sum of the flags), right_ranks[b + c - 1] the segment's total.
__global__ void scatter_kernel(const std::uint32_t* __restrict__ in, const std::uint8_t* __restrict__ right_flags,
                               std::size_t n, const Node* __restrict__ nodes, const int* __restrict__ active,
                               const std::uint32_t* __restrict__ owner, const std::uint32_t* __restrict__ right_ranks,
                               std::uint32_t* __restrict__ out) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const Node& node = nodes[active[owner[i]]];
  const std::size_t b = node.begin, c = node.count;
  const std::size_t rights_total = right_ranks[b + c - 1];
  const std::size_t rights_before = right_ranks[i] - right_flags[i];  // exclusive rank among the rights
  const std::size_t dest = right_flags[i] != 0 ? b + (c - rights_total) + rights_before  // after all lefts
                                                : b + (i - b) - rights_before;             // lefts before i
  out[dest] = in[i];
}

}  // namespace

void segmented_split(const std::uint32_t* in, const std::uint8_t* right_flags, std::size_t n, const Node* nodes,
                     const int* active, std::size_t m, std::uint32_t* out, cudaStream_t stream,
                     const std::uint32_t* owners) {
  detail::check_level("segmented_split", n, nodes, active, m);
  require_pointer("segmented_split", "in", in, n);
  require_pointer("segmented_split", "right_flags", right_flags, n);
  require_pointer("segmented_split", "out", out, n);
  if (n == 0) return;
  AsyncBuffer<std::uint8_t> heads(n, stream);
  AsyncBuffer<std::uint32_t> own_owners(owners == nullptr ? n : 0, stream);  // the broadcast, unless given
  AsyncBuffer<std::uint32_t> ranks(n, stream);
  CUDALAB_CHECK(cudaMemsetAsync(heads.data(), 0, n, stream));
  if (owners == nullptr) CUDALAB_CHECK(cudaMemsetAsync(own_owners.data(), 0, n * sizeof(std::uint32_t), stream));
  const auto node_blocks = static_cast<unsigned>((m + kBlock - 1) / kBlock);
  mark_heads_kernel<<<node_blocks, kBlock, 0, stream>>>(nodes, active, m, heads.data(), own_owners.data());
  CUDALAB_CHECK_LAUNCH();
  if (owners == nullptr) {
    segmented_inclusive_sum(own_owners.data(), heads.data(), n, own_owners.data(), stream);
    owners = own_owners.data();
  }
  const auto blocks = static_cast<unsigned>((n + kBlock - 1) / kBlock);
  widen_kernel<<<blocks, kBlock, 0, stream>>>(right_flags, n, ranks.data());
  CUDALAB_CHECK_LAUNCH();
  segmented_inclusive_sum(ranks.data(), heads.data(), n, ranks.data(), stream);
  scatter_kernel<<<blocks, kBlock, 0, stream>>>(in, right_flags, n, nodes, active, owners, ranks.data(), out);
  CUDALAB_CHECK_LAUNCH();
}

}  // namespace given_segmented_split

// ---- given: the solution of complete_nodes ----
namespace given_complete_nodes {

namespace {

constexpr int kBlock = 256;

// Given: a relaxed reservation of `amount` slots of a stack's counter
// (chapter 3, exercise 3.1): returns the first slot.
__device__ __forceinline__ long long reserve(long long* count, long long amount) {
  return static_cast<long long>(atomicAdd(reinterpret_cast<unsigned long long*>(count),
                                          static_cast<unsigned long long>(amount)));
}

// Given: push one node index on a list; past the capacity, set the flag and drop it.
__device__ __forceinline__ void push(const stack::DeviceStack<int>& list, int id) {
  const long long slot = reserve(list.count, 1);
  if (slot >= 0 && static_cast<unsigned long long>(slot) < list.capacity) {
    list.data[slot] = id;
  } else {
    atomicOr(list.errors, stack::kOverflow);
  }
}

__device__ __forceinline__ void set_coordinate(float3& p, int axis, float v) {
  if (axis == 0) p.x = v;
  else if (axis == 1) p.y = v;
  else p.z = v;
}

// Given: place a finished child: a range of points and a list, by the rule.
__device__ __forceinline__ void place(Node& child, int id, std::size_t threshold, int max_depth,
                                      const stack::DeviceStack<int>& next, const stack::DeviceStack<int>& small,
                                      unsigned long long* next_points, unsigned long long* small_points) {
  const bool large = child.count > threshold && child.depth < max_depth;
  child.begin = static_cast<unsigned>(atomicAdd(large ? next_points : small_points,
                                                static_cast<unsigned long long>(child.count)));
  push(large ? next : small, id);
}

// Thread k completes nodes[active[k]].
__global__ void complete_nodes_kernel(stack::DeviceStack<Node> nodes, const int* __restrict__ active,
                                      const std::uint32_t* __restrict__ right_counts, std::size_t m,
                                      std::size_t threshold, int max_depth, stack::DeviceStack<int> next,
                                      stack::DeviceStack<int> small, unsigned long long* next_points,
                                      unsigned long long* small_points) {
  const std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (k >= m) return;
  Node& parent = nodes.data[active[k]];
  const Node p = parent;
  const unsigned rights = right_counts[k];
  const long long slot = reserve(nodes.count, 2);
  if (slot < 0 || static_cast<unsigned long long>(slot) + 2 > nodes.capacity) {
    atomicOr(nodes.errors, stack::kOverflow);  // no room for both children: write none
    parent.left = parent.right = -1;
    return;
  }
  Node left{p.box, -1, 0.0f, -1, -1, 0u, p.count - rights, p.depth + 1};
  Node right{p.box, -1, 0.0f, -1, -1, 0u, rights, p.depth + 1};
  set_coordinate(left.box.hi, p.axis, p.split);
  set_coordinate(right.box.lo, p.axis, p.split);
  const int li = static_cast<int>(slot);
  place(left, li, threshold, max_depth, next, small, next_points, small_points);
  place(right, li + 1, threshold, max_depth, next, small, next_points, small_points);
  nodes.data[li] = left;
  nodes.data[li + 1] = right;
  parent.left = li;
  parent.right = li + 1;
}

void check_list(const char* what, const stack::DeviceStack<int>& list) {
  require_pointer("complete_nodes", what, list.data, list.capacity);
  require_pointer("complete_nodes", "a list's count", list.count, 1);
  require_pointer("complete_nodes", "a list's errors", list.errors, 1);
}

}  // namespace

void complete_nodes(stack::DeviceStack<Node> nodes, const int* active, const std::uint32_t* right_counts,
                    std::size_t m, std::size_t threshold, int max_depth, stack::DeviceStack<int> next,
                    stack::DeviceStack<int> small, unsigned long long* next_points, unsigned long long* small_points,
                    cudaStream_t stream) {
  require_count_at_most("complete_nodes", m, max_points);
  if (threshold == 0) throw std::invalid_argument("complete_nodes: threshold T = 0 (a node must hold at most T >= 1 points)");
  if (max_depth < 1) throw std::invalid_argument("complete_nodes: max_depth = " + std::to_string(max_depth) + " < 1");
  require_pointer("complete_nodes", "nodes.data", nodes.data, nodes.capacity);
  require_pointer("complete_nodes", "nodes.count", nodes.count, 1);
  require_pointer("complete_nodes", "nodes.errors", nodes.errors, 1);
  check_list("next.data", next);
  check_list("small.data", small);
  require_pointer("complete_nodes", "active", active, m);
  require_pointer("complete_nodes", "right_counts", right_counts, m);
  require_pointer("complete_nodes", "next_points", next_points, 1);
  require_pointer("complete_nodes", "small_points", small_points, 1);
  if (m == 0) return;
  const auto blocks = static_cast<unsigned>((m + kBlock - 1) / kBlock);
  complete_nodes_kernel<<<blocks, kBlock, 0, stream>>>(nodes, active, right_counts, m, threshold, max_depth, next,
                                                       small, next_points, small_points);
  CUDALAB_CHECK_LAUNCH();
}

}  // namespace given_complete_nodes

// ---- given: the kernels and helpers of the stage ----

constexpr int kStageBlock = 256;

unsigned blocks_for(std::size_t n) { return static_cast<unsigned>((n + kStageBlock - 1) / kStageBlock); }

__global__ void iota_kernel(std::uint32_t* out, std::size_t n) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = static_cast<std::uint32_t>(i);
}

// Position i of the split working array (7.4's output): its node is
// nodes[active[owner[i]]]; the first count - rights positions of the segment
// go to the left child, the others to the right child, each to position
// (i - first position of its side) of the child's range, in the next working
// array when the child is large, in leaf_points when it is small. A parent
// without children (node array overflow) moves nothing.
__global__ void move_points_kernel(const std::uint32_t* __restrict__ split_idx, std::size_t n,
                                   const Node* __restrict__ nodes, const int* __restrict__ active,
                                   const std::uint32_t* __restrict__ owner, const std::uint32_t* __restrict__ rights,
                                   std::size_t threshold, int max_depth, std::uint32_t* __restrict__ next_idx,
                                   std::uint32_t* __restrict__ leaf_points) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const int k = static_cast<int>(owner[i]);
  const Node& p = nodes[active[k]];
  if (p.left < 0) return;
  const std::size_t lefts = p.count - rights[k], offset = i - p.begin;
  const bool right = offset >= lefts;
  const Node& child = nodes[right ? p.right : p.left];
  const std::size_t local = right ? offset - lefts : offset;
  const bool large = child.count > threshold && child.depth < max_depth;
  (large ? next_idx : leaf_points)[child.begin + local] = split_idx[i];
}

// The four numbers the host needs after a level, gathered on the device so
// that one copy (one synchronization) brings them back.
struct LevelCounters {
  long long nodes;                ///< the node stack's counter
  long long next;                 ///< the next list's counter
  unsigned long long next_points; ///< points in the next level's working array
  unsigned errors;                ///< the node stack's error word
};

__global__ void gather_counters_kernel(const long long* node_count, const unsigned* node_errors,
                                       const long long* next_count, const unsigned long long* next_points,
                                       LevelCounters* out) {
  *out = LevelCounters{*node_count, *next_count, *next_points, *node_errors};
}

// Enqueues the gather and reads the counters back (synchronizes the stream).
LevelCounters read_counters(const long long* node_count, const unsigned* node_errors, const long long* next_count,
                            const unsigned long long* next_points, LevelCounters* scratch, cudaStream_t stream) {
  gather_counters_kernel<<<1, 1, 0, stream>>>(node_count, node_errors, next_count, next_points, scratch);
  CUDALAB_CHECK_LAUNCH();
  return stack::detail::read_device_value(scratch, stream);
}

// Every counter and error word of the stage in one device block: one
// allocation, one memset to zero, and start_stage_kernel sets the others.
struct StageCounters {
  long long node_count;            ///< the node stack's counter
  long long small_count;           ///< the small list's counter
  long long list_count[2];         ///< the counters of the active and next lists
  unsigned node_errors;            ///< the node stack's error word
  unsigned small_errors;           ///< the small list's error word
  unsigned list_errors[2];         ///< the lists' error words
  unsigned long long points[2];    ///< next_points, small_points
  LevelCounters level;             ///< what read_counters brings back
  Box root_box;                    ///< 7.1's output
  std::uint64_t first_bad;         ///< 7.1's first bad index
};

// Writes the root (the box of 7.1, all n points, depth 0) and starts the
// stacks: when the root is small, small[0] = 0; otherwise the node count is
// 1 and the active list holds the root alone. One thread: no host copies.
__global__ void start_stage_kernel(StageCounters* c, Node* nodes, std::size_t n, bool root_is_small, int* small,
                                   int* active) {
  nodes[0] = Node{c->root_box, -1, 0.0f, -1, -1, 0u, static_cast<unsigned>(n), 0};
  c->node_count = 1;
  if (root_is_small) {
    small[0] = 0;
    c->small_count = 1;
  } else {
    active[0] = 0;
    c->list_count[0] = 1;
  }
}

}  // namespace

LargeNodeStage build_large_nodes(const float3* points, std::size_t n, std::size_t threshold, int max_depth,
                                 Node* nodes, std::size_t node_capacity, int* small, std::uint32_t* leaf_points,
                                 cudaStream_t stream, bool time_levels) {
  const char* fn = "build_large_nodes";
  if (n == 0) throw std::invalid_argument(std::string(fn) + ": no points (n = 0)");
  require_count_at_most(fn, n, max_points);
  if (threshold == 0) throw std::invalid_argument(std::string(fn) + ": threshold T = 0 (a leaf must hold at most T >= 1 points)");
  if (max_depth < 0 || max_depth > 64)
    throw std::invalid_argument(std::string(fn) + ": max_depth = " + std::to_string(max_depth) + " is outside [0, 64]");
  if (node_capacity == 0) throw std::invalid_argument(std::string(fn) + ": node_capacity = 0 (the root needs a node)");
  require_count_at_most(fn, node_capacity, max_points);
  require_pointer(fn, "points", points, n);
  require_pointer(fn, "nodes", nodes, node_capacity);
  require_pointer(fn, "small", small, node_capacity);
  require_pointer(fn, "leaf_points", leaf_points, n);

  // Scratch of the stage from the stream-ordered pool: no cudaMalloc, no
  // cudaFree (which would synchronize the device), memory kept between calls.
  cudalab::detail::keep_pool_memory(std::uint64_t{24} * n + std::uint64_t{16} * node_capacity + (std::uint64_t{16} << 20));
  AsyncBuffer<StageCounters> block(1, stream);
  StageCounters* st = block.data();
  CUDALAB_CHECK(cudaMemsetAsync(st, 0, sizeof(StageCounters), stream));

  // The root: its box, and the check of the input, before anything is written.
  given_bounding_box::bounding_box(points, n, &st->root_box, &st->first_bad, stream);
  const std::uint64_t bad = stack::detail::read_device_value(&st->first_bad, stream);
  if (bad < n)
    throw std::invalid_argument(std::string(fn) + ": point " + std::to_string(bad) +
                                " has a NaN or infinite coordinate");
  const bool root_is_small = n <= threshold || max_depth == 0;
  // The node array, the small list and the active and next lists of node
  // indices are chapter 3 stacks; all their counters are in `block`.
  AsyncBuffer<int> list_data(root_is_small ? 0 : 2 * node_capacity, stream);
  start_stage_kernel<<<1, 1, 0, stream>>>(st, nodes, n, root_is_small, small, list_data.data());
  CUDALAB_CHECK_LAUNCH();
  LargeNodeStage result;
  result.nodes = 1;
  if (root_is_small) {
    iota_kernel<<<blocks_for(n), kStageBlock, 0, stream>>>(leaf_points, n);
    CUDALAB_CHECK_LAUNCH();
    CUDALAB_CHECK(cudaStreamSynchronize(stream));
    result.small = 1;
    return result;
  }
  const stack::DeviceStack<Node> node_stack{nodes, node_capacity, &st->node_count, &st->node_errors};
  const stack::DeviceStack<int> small_stack{small, node_capacity, &st->small_count, &st->small_errors};
  stack::DeviceStack<int> active_list{list_data.data(), node_capacity, &st->list_count[0], &st->list_errors[0]};
  stack::DeviceStack<int> next_list{list_data.data() + node_capacity, node_capacity, &st->list_count[1],
                                    &st->list_errors[1]};
  // Working arrays: the level's point indices, the split ones, the owners (7.3's broadcast), flags, right counts.
  AsyncBuffer<std::uint32_t> work(n, stream), split(n, stream), owner(n, stream), rights(node_capacity, stream);
  AsyncBuffer<std::uint8_t> flags(n, stream);
  unsigned long long* next_points = &st->points[0];
  unsigned long long* small_points = &st->points[1];
  LevelCounters* counters = &st->level;
  iota_kernel<<<blocks_for(n), kStageBlock, 0, stream>>>(work.data(), n);
  CUDALAB_CHECK_LAUNCH();
  EventTimer timer;

  // TODO(7.6): m = 1 active node (the root), level_points = n; while m > 0:
  // the splits (given_select_splits::select_splits),
  // classification (given_classify_and_count::..., with `owner` as its
  // owners output), the split of the working array into `split`
  // (given_segmented_split::..., reusing `owner`), reset the next list's
  // count and *next_points, complete the nodes (given_complete_nodes::...),
  // move_points_kernel (writing the next level into `work`),
  // record result.levels / nodes / depth, read_counters (into `counters`),
  // throw std::length_error when its error word is set, take the next m
  // and level_points from it, swap the lists.
  result.small = static_cast<std::size_t>(stack::detail::read_device_value(small_stack.count, stream));
  return result;
}

}  // namespace cudalab::kdtree
