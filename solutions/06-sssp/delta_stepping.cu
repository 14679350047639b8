// Exercise 6.4: delta-stepping (Meyer and Sanders): buckets of width delta,
// light edges relaxed phase after phase inside the current bucket, heavy
// edges once per bucket, later buckets waiting in a "far" list; distance and
// parent packed in one 64-bit word, so the parents form a shortest-path tree.
// Lesson: chapters/06-sssp/README.md, "6.4".
// Grade:  tools/grade 6.4      Hints: tools/grade --hint 6.4
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "cudalab/async_buffer.cuh"
#include "cudalab/device.cuh"
#include "cudalab/error.cuh"
#include "cudalab/sssp.cuh"

namespace cudalab::sssp {
namespace {

constexpr int kBlock = 256;
using packed_t = unsigned long long;  // (distance << 32) | parent, parent as uint32 (kNoParent: 0xFFFFFFFF)

__host__ __device__ constexpr packed_t pack(dist_t d, vertex_t parent) {
  return (static_cast<packed_t>(d) << 32) | static_cast<std::uint32_t>(parent);
}
__device__ __forceinline__ dist_t dist_of(packed_t k) { return static_cast<dist_t>(k >> 32); }

// The state every phase kernel needs, passed by value.
struct State {
  CsrView g;
  packed_t* key;               // n packed (distance, parent)
  dist_t delta;
  unsigned long long upper; // end of the current bucket: (i + 1) * delta
  vertex_t* next;           // the next light frontier
  unsigned* next_count;
  unsigned* stamp;          // stamp[v] == tag: v is already in `next`
  unsigned tag;
  vertex_t* far;            // vertices waiting for a later bucket
  unsigned* far_count;
  unsigned* in_far;         // 1 while v is in `far`
  vertex_t* settled;        // the vertices the current bucket has held (for the heavy phase)
  unsigned* settled_count;
  unsigned* settled_stamp;  // settled_stamp[v] == bucket: v is already in `settled`
  unsigned bucket;          // 1-based number of the current bucket
};

// Lowers v's distance to nd with parent u, only when nd is strictly smaller;
// true when it did. The CAS keeps distance and parent consistent.
__device__ bool relax(packed_t* key, vertex_t v, unsigned long long nd, vertex_t u) {
  // BEGIN SOLUTION
  if (nd >= kInfinity) return false;  // beyond the representable range (a precondition)
  const packed_t desired = pack(static_cast<dist_t>(nd), u);
  packed_t old = key[v];  // possibly stale: the CAS corrects it
  while (dist_of(old) > nd) {
    const packed_t seen = atomicCAS(key + v, old, desired);
    if (seen == old) return true;
    old = seen;
  }
  return false;
  // STARTER:
  // // TODO(6.4): if nd < dist_of(key[v]), replace key[v] by pack(nd, u) with an
  // // atomicCAS loop (retry while the distance you see is still larger
  // // than nd) and return true; never overwrite an equal distance.
  // (void)key; (void)v; (void)nd; (void)u;
  // return false;
  // END SOLUTION
}

// Where a vertex goes when its distance fell to nd: into the next light
// frontier when nd lies in the current bucket (once per frontier), else
// into the far list (once while it waits there).
__device__ void schedule(const State& s, vertex_t v, unsigned long long nd) {
  // BEGIN SOLUTION
  if (nd < s.upper) {
    if (atomicExch(s.stamp + v, s.tag) != s.tag) s.next[atomicAdd(s.next_count, 1u)] = v;
  } else {
    if (atomicExch(s.in_far + v, 1u) == 0u) s.far[atomicAdd(s.far_count, 1u)] = v;
  }
  // STARTER:
  // // TODO(6.4): nd < s.upper: push v to s.next unless it is already there
  // // (claim s.stamp[v] = s.tag with atomicExch); else push it to s.far
  // // unless it is already there (claim s.in_far[v] with atomicExch).
  // (void)s; (void)v; (void)nd;
  // END SOLUTION
}

// A light phase: each frontier vertex u (recorded once per bucket in
// `settled`) relaxes its edges of weight <= delta.
__global__ void light_kernel(State s, const vertex_t* __restrict__ frontier, unsigned count) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) {
    const vertex_t u = frontier[i];
    if (atomicExch(s.settled_stamp + u, s.bucket) != s.bucket) s.settled[atomicAdd(s.settled_count, 1u)] = u;
    const unsigned long long du = dist_of(s.key[u]);
    // BEGIN SOLUTION
    for (graph::offset_t e = s.g.row_offsets[u]; e < s.g.row_offsets[u + 1]; ++e) {
      const weight_t w = s.g.weights[e];
      if (static_cast<dist_t>(w) > s.delta) continue;  // heavy: later
      const vertex_t v = s.g.col_indices[e];
      const unsigned long long nd = du + static_cast<unsigned long long>(w);
      if (relax(s.key, v, nd, u)) schedule(s, v, nd);
    }
    // STARTER:
    // // TODO(6.4): for each out-edge u -> v of weight w <= s.delta, relax v
    // // to du + w with parent u and schedule v when that lowered it.
    // (void)du;
    // END SOLUTION
  }
}

// The heavy phase: each vertex the bucket held relaxes its edges of weight
// > delta once (their heads land in later buckets).
__global__ void heavy_kernel(State s, const vertex_t* __restrict__ held, unsigned count) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) {
    const vertex_t u = held[i];
    const unsigned long long du = dist_of(s.key[u]);
    // BEGIN SOLUTION
    for (graph::offset_t e = s.g.row_offsets[u]; e < s.g.row_offsets[u + 1]; ++e) {
      const weight_t w = s.g.weights[e];
      if (static_cast<dist_t>(w) <= s.delta) continue;  // light: done
      const vertex_t v = s.g.col_indices[e];
      const unsigned long long nd = du + static_cast<unsigned long long>(w);
      if (relax(s.key, v, nd, u)) schedule(s, v, nd);
    }
    // STARTER:
    // // TODO(6.4): for each out-edge u -> v of weight w > s.delta, relax v to
    // // du + w with parent u and schedule v when that lowered it.
    // (void)du;
    // END SOLUTION
  }
}

// The smallest distance at or above `lower` among the far vertices.
__global__ void far_min_kernel(const vertex_t* __restrict__ far, unsigned count, const packed_t* key,
                               unsigned long long lower, unsigned* min_dist) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) {
    const dist_t d = dist_of(key[far[i]]);
    if (d >= lower) atomicMin(min_dist, d);
  }
}

// Splits the far list at the start of the bucket [lower, upper): vertices
// now below `lower` were settled in an earlier bucket (dropped), those in
// the bucket form the first frontier, the others stay far.
__global__ void split_kernel(const vertex_t* __restrict__ far, unsigned count, const packed_t* key,
                             unsigned long long lower, unsigned long long upper, unsigned* in_far,
                             vertex_t* frontier, unsigned* frontier_count, unsigned* stamp, unsigned tag,
                             vertex_t* far_out, unsigned* far_out_count) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < count; i += gridDim.x * blockDim.x) {
    const vertex_t v = far[i];
    const dist_t d = dist_of(key[v]);
    if (d < lower) {
      in_far[v] = 0;
    } else if (d < upper) {
      in_far[v] = 0;
      stamp[v] = tag;
      frontier[atomicAdd(frontier_count, 1u)] = v;
    } else {
      far_out[atomicAdd(far_out_count, 1u)] = v;
    }
  }
}

__global__ void init_kernel(packed_t* key, std::size_t n, vertex_t source) {
  for (std::size_t v = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; v < n;
       v += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    key[v] = pack(v == static_cast<std::size_t>(source) ? 0 : kInfinity, kNoParent);
}

__global__ void unpack_kernel(const packed_t* key, std::size_t n, dist_t* dist, vertex_t* parent) {
  for (std::size_t v = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; v < n;
       v += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const packed_t k = key[v];
    dist[v] = dist_of(k);
    parent[v] = dist_of(k) == kInfinity ? kNoParent : static_cast<vertex_t>(static_cast<std::uint32_t>(k));
  }
}

}  // namespace

Stats delta_stepping(CsrView g, vertex_t source, dist_t delta, dist_t* dist, vertex_t* parent, cudaStream_t stream) {
  detail::check_sssp_arguments("delta_stepping", g, source, dist, true);
  require_pointer("delta_stepping", "parent", parent, g.num_vertices);
  if (delta == 0) throw std::invalid_argument("delta_stepping: delta must be at least 1");
  const std::size_t n = g.num_vertices;
  auto blocks_for = [](std::size_t count) { return detail::grid_for(count, kBlock); };

  AsyncBuffer<packed_t> key(n, stream);
  AsyncBuffer<vertex_t> lists(5 * n, stream);  // frontier, next, far, far_out, settled
  AsyncBuffer<unsigned> marks(3 * n, stream);  // stamp, in_far, settled_stamp
  AsyncBuffer<unsigned> counters(6, stream);   // next, far, far_out, settled, frontier, min
  marks.fill_bytes(0);
  init_kernel<<<blocks_for(n), kBlock, 0, stream>>>(key.data(), n, source);
  CUDALAB_CHECK_LAUNCH();
  vertex_t* frontier = lists.data();
  vertex_t* next = lists.data() + n;
  vertex_t* far = lists.data() + 2 * n;
  vertex_t* far_out = lists.data() + 3 * n;
  vertex_t* settled = lists.data() + 4 * n;
  unsigned* stamp = marks.data();
  unsigned* in_far = marks.data() + n;
  unsigned* settled_stamp = marks.data() + 2 * n;
  unsigned* c_next = counters.data();
  unsigned* c_far = counters.data() + 1;
  unsigned* c_far_out = counters.data() + 2;
  unsigned* c_settled = counters.data() + 3;
  unsigned* c_frontier = counters.data() + 4;
  unsigned* c_min = counters.data() + 5;

  // The source waits in the far list; the first bucket takes it out.
  const unsigned one = 1;
  CUDALAB_CHECK(cudaMemcpyAsync(far, &source, sizeof(vertex_t), cudaMemcpyHostToDevice, stream));
  CUDALAB_CHECK(cudaMemcpyAsync(in_far + source, &one, sizeof(unsigned), cudaMemcpyHostToDevice, stream));
  Stats stats;
  // BEGIN SOLUTION
  unsigned far_count = 1;
  // One copy brings all six counters (one round trip per phase); value(c)
  // is counter c as of the last copy.
  unsigned host[6] = {};
  auto read_all = [&] {
    CUDALAB_CHECK(cudaMemcpyAsync(host, counters.data(), sizeof(host), cudaMemcpyDeviceToHost, stream));
    CUDALAB_CHECK(cudaStreamSynchronize(stream));
  };
  auto value = [&](const unsigned* c) { return host[c - counters.data()]; };
  unsigned tag = 0;
  unsigned long long lower = 0;
  while (far_count > 0) {
    // The next bucket: the one holding the smallest far distance >= lower.
    CUDALAB_CHECK(cudaMemsetAsync(c_min, 0xFF, sizeof(unsigned), stream));
    far_min_kernel<<<blocks_for(far_count), kBlock, 0, stream>>>(far, far_count, key.data(), lower, c_min);
    CUDALAB_CHECK_LAUNCH();
    read_all();
    const dist_t smallest = value(c_min);
    if (smallest == kInfinity) break;  // every far entry was settled already
    const unsigned long long upper = (static_cast<unsigned long long>(smallest) / delta + 1) * delta;
    ++stats.buckets;
    ++tag;
    CUDALAB_CHECK(cudaMemsetAsync(counters.data(), 0, 6 * sizeof(unsigned), stream));
    split_kernel<<<blocks_for(far_count), kBlock, 0, stream>>>(far, far_count, key.data(), lower, upper, in_far,
                                                              frontier, c_frontier, stamp, tag, far_out, c_far_out);
    CUDALAB_CHECK_LAUNCH();
    std::swap(far, far_out);
    std::swap(c_far, c_far_out);  // later pushes append to the kept far vertices
    read_all();
    unsigned count = value(c_frontier);
    State s{g,      key.data(), delta,   upper,     next,    c_next,   stamp,
            0,      far,        c_far,   in_far,    settled, c_settled, settled_stamp,
            static_cast<unsigned>(stats.buckets)};
    for (;;) {
      // Light phases until the bucket stays empty.
      while (count > 0) {
        s.next = next;
        s.tag = ++tag;
        CUDALAB_CHECK(cudaMemsetAsync(c_next, 0, sizeof(unsigned), stream));
        light_kernel<<<blocks_for(count), kBlock, 0, stream>>>(s, frontier, count);
        CUDALAB_CHECK_LAUNCH();
        ++stats.iterations;
        read_all();
        count = value(c_next);
        std::swap(frontier, next);
      }
      // One heavy phase over every vertex the bucket held.
      const unsigned held = value(c_settled);  // current: read after the last light phase
      s.next = next;
      s.tag = ++tag;
      CUDALAB_CHECK(cudaMemsetAsync(c_next, 0, sizeof(unsigned), stream));
      heavy_kernel<<<blocks_for(held), kBlock, 0, stream>>>(s, settled, held);
      CUDALAB_CHECK_LAUNCH();
      ++stats.iterations;
      read_all();
      count = value(c_next);  // 0: heavy edges always leave the bucket
      std::swap(frontier, next);
      if (count == 0) break;
    }
    CUDALAB_CHECK(cudaMemsetAsync(c_settled, 0, sizeof(unsigned), stream));
    far_count = value(c_far);  // current: read after the heavy phase
    lower = upper;
  }
  // STARTER:
  // // TODO(6.4): bucket after bucket, while the far list (which holds the
  // // source at first) is not empty: choose the bucket of the smallest far
  // // distance >= lower (far_min_kernel), split the far list (split_kernel:
  // // the first frontier, the kept far vertices), run light phases
  // // (light_kernel) until the frontier stays empty, then one heavy phase
  // // (heavy_kernel) over the vertices the bucket held; count phases in
  // // stats.iterations and buckets in stats.buckets; then lower = the
  // // bucket's end.
  // (void)frontier; (void)next; (void)far_out; (void)settled; (void)stamp; (void)settled_stamp;
  // (void)c_next; (void)c_far; (void)c_far_out; (void)c_settled; (void)c_frontier; (void)c_min;
  // END SOLUTION
  unpack_kernel<<<blocks_for(n), kBlock, 0, stream>>>(key.data(), n, dist, parent);
  CUDALAB_CHECK_LAUNCH();
  CUDALAB_CHECK(cudaStreamSynchronize(stream));
  return stats;
}

}  // namespace cudalab::sssp
