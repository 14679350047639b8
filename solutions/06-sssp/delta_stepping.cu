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
  // END SOLUTION
}

// Relaxes the out-edges e = begin + rank, begin + rank + stride, ... < end
// of u (at distance du) of one weight class: w <= delta in a light phase,
// w > delta in the heavy one. stride threads call it together with ranks
// 0..stride-1, so that one vertex's edges can be shared by a warp or a block.
template <bool kLight>
__device__ void relax_edges(const State& s, vertex_t u, unsigned long long du, graph::offset_t begin,
                            graph::offset_t end, unsigned rank, unsigned stride) {
  // BEGIN SOLUTION
  // 64-bit edge indices: u's edges may end at 2^32 - 1, where a 32-bit e + stride wraps around.
  for (std::size_t e = static_cast<std::size_t>(begin) + rank; e < end; e += stride) {
    const weight_t w = s.g.weights[e];
    if ((static_cast<dist_t>(w) <= s.delta) != kLight) continue;  // the other class
    const vertex_t v = s.g.col_indices[e];
    const unsigned long long nd = du + static_cast<unsigned long long>(w);
    if (relax(s.key, v, nd, u)) schedule(s, v, nd);
  }
  // STARTER:
  // // TODO(6.4): for each edge e = begin + rank, begin + rank + stride, ...
  // // below end (e a 64-bit index: end may be 2^32 - 1, where a 32-bit e
  // // wraps), u -> v = s.g.col_indices[e] of weight w = s.g.weights[e]:
  // // skip it unless (w <= s.delta) == kLight; relax v to du + w with
  // // parent u, and schedule v when that lowered it.
  // END SOLUTION
}

// One phase: every vertex of `list` relaxes its edges of one weight class
// (light: the frontier, each vertex also recorded once per bucket in
// `settled`; heavy: every vertex the bucket held). A thread per vertex would
// leave an R-MAT hub's 10^5 edges to one thread while its block waits, so
// the work is shared as in Merrill, Garland and Grimshaw's thread-warp-CTA
// expansion ("Scalable GPU graph traversal", PPoPP 2012): vertices with at
// least blockDim.x edges are expanded by the whole block, one at a time;
// then vertices with at least 32 by their warp; the rest by their thread.
template <bool kLight>
__global__ void __launch_bounds__(kBlock) expand_kernel(State s, const vertex_t* __restrict__ list, unsigned count) {
  __shared__ int owner;  // the thread whose vertex the block expands next
  __shared__ vertex_t shared_u;
  __shared__ graph::offset_t shared_begin, shared_end;
  __shared__ unsigned long long shared_du;
  const unsigned lane = threadIdx.x % 32;
  // base is the same in every thread of the block: the barriers below are reached by all.
  for (unsigned base = blockIdx.x * blockDim.x; base < count; base += gridDim.x * blockDim.x) {
    const unsigned i = base + threadIdx.x;
    vertex_t u = 0;
    graph::offset_t begin = 0, end = 0;
    unsigned long long du = 0;
    if (i < count) {
      u = list[i];
      if (kLight && atomicExch(s.settled_stamp + u, s.bucket) != s.bucket)
        s.settled[atomicAdd(s.settled_count, 1u)] = u;
      begin = s.g.row_offsets[u];
      end = s.g.row_offsets[u + 1];
      du = dist_of(s.key[u]);
    }
    // The block, one large vertex at a time.
    for (;;) {
      if (threadIdx.x == 0) owner = -1;
      __syncthreads();
      if (end - begin >= blockDim.x) atomicMax(&owner, static_cast<int>(threadIdx.x));
      __syncthreads();
      const int o = owner;
      if (o < 0) break;  // the same in every thread
      if (static_cast<int>(threadIdx.x) == o) {
        shared_u = u;
        shared_begin = begin;
        shared_end = end;
        shared_du = du;
        begin = end;  // taken
      }
      __syncthreads();
      relax_edges<kLight>(s, shared_u, shared_du, shared_begin, shared_end, threadIdx.x, blockDim.x);
      __syncthreads();  // all have read the shared vertex before the next one is written
    }
    // The warp, one medium vertex at a time.
    for (unsigned mask; (mask = __ballot_sync(0xFFFFFFFFu, end - begin >= 32)) != 0;) {
      const int leader = __ffs(static_cast<int>(mask)) - 1;
      const vertex_t wu = __shfl_sync(0xFFFFFFFFu, u, leader);
      const graph::offset_t wb = __shfl_sync(0xFFFFFFFFu, begin, leader);
      const graph::offset_t we = __shfl_sync(0xFFFFFFFFu, end, leader);
      const unsigned long long wdu = __shfl_sync(0xFFFFFFFFu, du, leader);
      if (static_cast<int>(lane) == leader) begin = end;
      relax_edges<kLight>(s, wu, wdu, wb, we, lane, 32);
    }
    // Each thread, its own small vertex.
    relax_edges<kLight>(s, u, du, begin, end, 0, 1);
    __syncthreads();  // every thread has read `owner` before the next round resets it
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

// The counters of one run, one word each, in one device buffer: one copy
// brings them all back, so a phase costs one round trip.
struct Counters {
  unsigned next;      // the next light frontier's length
  unsigned far[2];    // the two far lists' lengths (the lists swap at every split: Run::far_slot)
  unsigned settled;   // the vertices the current bucket has held
  unsigned frontier;  // a bucket's first frontier (split_kernel)
  unsigned min_dist;  // the smallest far distance at or above the bucket's start (far_min_kernel)
};

// One run's device memory: n packed keys, five lists of n vertices in one
// buffer, three arrays of n marks in one buffer (zeroed), the counters.
struct Scratch {
  AsyncBuffer<packed_t> key;
  AsyncBuffer<vertex_t> lists;  // frontier, next, far, far_out, settled (Run)
  AsyncBuffer<unsigned> marks;  // stamp, in_far, settled_stamp (Run)
  AsyncBuffer<Counters> counters;

  Scratch(std::size_t n, cudaStream_t stream)
      : key(n, stream), lists(5 * n, stream), marks(3 * n, stream), counters(1, stream) {
    marks.fill_bytes(0);
  }
};

// What the bucket loop works on: the graph, the scratch carved by name, and
// the host's copy of the counters. The lists' pointers swap as the loop goes.
struct Run {
  CsrView g;
  dist_t delta;
  cudaStream_t stream;
  packed_t* key;
  vertex_t* frontier;
  vertex_t* next;
  vertex_t* far;             // the far list the next bucket reads
  vertex_t* far_out;         // where split_kernel writes the vertices that stay far
  vertex_t* settled;
  unsigned* stamp;
  unsigned* in_far;
  unsigned* settled_stamp;
  Counters* counters;        // device
  int far_slot = 0;          // counters->far[far_slot] counts `far`, the other one `far_out`
  unsigned tag = 0;          // the last stamp tag handed out
  Counters seen{};           // the counters as of the last read()

  Run(const CsrView& graph, dist_t d, Scratch& sc, cudaStream_t s)
      : g(graph), delta(d), stream(s), key(sc.key.data()) {
    const std::size_t n = g.num_vertices;
    vertex_t* l = sc.lists.data();
    frontier = l;
    next = l + n;
    far = l + 2 * n;
    far_out = l + 3 * n;
    settled = l + 4 * n;
    stamp = sc.marks.data();
    in_far = sc.marks.data() + n;
    settled_stamp = sc.marks.data() + 2 * n;
    counters = sc.counters.data();
  }
  // One copy of every counter into `seen`, then a wait.
  void read() {
    CUDALAB_CHECK(cudaMemcpyAsync(&seen, counters, sizeof(Counters), cudaMemcpyDeviceToHost, stream));
    CUDALAB_CHECK(cudaStreamSynchronize(stream));
  }
};

unsigned blocks_for(std::size_t count) { return detail::grid_for(count, kBlock); }

// Settles the bucket that ends at `upper`, whose first frontier split_kernel
// wrote (r.seen.frontier, as of the last read): light phases until the
// frontier stays empty, then one heavy phase over every vertex the bucket
// held; again while the heavy phase put a vertex back into the bucket.
void settle_bucket(Run& r, unsigned long long upper, Stats& stats) {
  // BEGIN SOLUTION
  unsigned count = r.seen.frontier;
  State s{r.g,      r.key,     r.delta,   upper,     r.next,  &r.counters->next,
          r.stamp,  0,         r.far,     &r.counters->far[r.far_slot],
          r.in_far, r.settled, &r.counters->settled,  r.settled_stamp,
          static_cast<unsigned>(stats.buckets)};
  for (;;) {
    // Light phases until the bucket stays empty.
    while (count > 0) {
      s.next = r.next;
      s.tag = ++r.tag;
      CUDALAB_CHECK(cudaMemsetAsync(&r.counters->next, 0, sizeof(unsigned), r.stream));
      expand_kernel<true><<<blocks_for(count), kBlock, 0, r.stream>>>(s, r.frontier, count);
      CUDALAB_CHECK_LAUNCH();
      ++stats.iterations;
      r.read();
      count = r.seen.next;
      std::swap(r.frontier, r.next);
    }
    // One heavy phase over every vertex the bucket held.
    const unsigned held = r.seen.settled;  // current: read after the last light phase
    s.next = r.next;
    s.tag = ++r.tag;
    CUDALAB_CHECK(cudaMemsetAsync(&r.counters->next, 0, sizeof(unsigned), r.stream));
    expand_kernel<false><<<blocks_for(held), kBlock, 0, r.stream>>>(s, r.settled, held);
    CUDALAB_CHECK_LAUNCH();
    ++stats.iterations;
    r.read();
    count = r.seen.next;  // 0: heavy edges always leave the bucket
    std::swap(r.frontier, r.next);
    if (count == 0) break;
  }
  // STARTER:
  // // TODO(6.4): light phases (expand_kernel<true> over r.frontier, the
  // // next frontier in r.next) until the frontier stays empty, then one
  // // heavy phase (expand_kernel<false>) over the r.seen.settled vertices
  // // of r.settled; again while the heavy phase refilled the frontier.
  // // Each phase: a new tag (++r.tag), r.counters->next reset, r.read()
  // // after it; count it in stats.iterations.
  // END SOLUTION
}

// Bucket after bucket, while the far list (which holds the source at first)
// is not empty: the bucket of the smallest far distance, its first frontier
// split from the far list, then settle_bucket.
Stats run_buckets(Run& r) {
  Stats stats;
  // BEGIN SOLUTION
  unsigned far_count = 1;
  unsigned long long lower = 0;
  while (far_count > 0) {
    // The next bucket: the one holding the smallest far distance >= lower.
    CUDALAB_CHECK(cudaMemsetAsync(&r.counters->min_dist, 0xFF, sizeof(unsigned), r.stream));
    far_min_kernel<<<blocks_for(far_count), kBlock, 0, r.stream>>>(r.far, far_count, r.key, lower,
                                                                  &r.counters->min_dist);
    CUDALAB_CHECK_LAUNCH();
    r.read();
    const dist_t smallest = r.seen.min_dist;
    if (smallest == kInfinity) break;  // every far entry was settled already
    const unsigned long long upper = (static_cast<unsigned long long>(smallest) / r.delta + 1) * r.delta;
    ++stats.buckets;
    ++r.tag;
    CUDALAB_CHECK(cudaMemsetAsync(r.counters, 0, sizeof(Counters), r.stream));
    split_kernel<<<blocks_for(far_count), kBlock, 0, r.stream>>>(
        r.far, far_count, r.key, lower, upper, r.in_far, r.frontier, &r.counters->frontier, r.stamp, r.tag,
        r.far_out, &r.counters->far[1 - r.far_slot]);
    CUDALAB_CHECK_LAUNCH();
    std::swap(r.far, r.far_out);
    r.far_slot = 1 - r.far_slot;  // later pushes append to the kept far vertices
    r.read();
    settle_bucket(r, upper, stats);
    CUDALAB_CHECK(cudaMemsetAsync(&r.counters->settled, 0, sizeof(unsigned), r.stream));
    far_count = r.seen.far[r.far_slot];  // current: read after the heavy phase
    lower = upper;
  }
  // STARTER:
  // // TODO(6.4): bucket after bucket, while the far list is not empty:
  // // choose the bucket of the smallest far distance >= lower
  // // (far_min_kernel into r.counters->min_dist), split the far list
  // // (split_kernel: the first frontier, the kept far vertices; then swap
  // // r.far and r.far_out, and r.far_slot), settle the bucket
  // // (settle_bucket), count buckets in stats.buckets; then lower = the
  // // bucket's end.
  // END SOLUTION
  return stats;
}

}  // namespace

Stats delta_stepping(CsrView g, vertex_t source, dist_t delta, dist_t* dist, vertex_t* parent, cudaStream_t stream) {
  detail::check_delta_stepping_arguments("delta_stepping", g, source, delta, dist, parent);
  const std::size_t n = g.num_vertices;
  Scratch scratch(n, stream);
  init_kernel<<<blocks_for(n), kBlock, 0, stream>>>(scratch.key.data(), n, source);
  CUDALAB_CHECK_LAUNCH();
  Run run(g, delta, scratch, stream);
  // The source waits in the far list; the first bucket takes it out.
  const unsigned one = 1;
  CUDALAB_CHECK(cudaMemcpyAsync(run.far, &source, sizeof(vertex_t), cudaMemcpyHostToDevice, stream));
  CUDALAB_CHECK(cudaMemcpyAsync(run.in_far + source, &one, sizeof(unsigned), cudaMemcpyHostToDevice, stream));
  const Stats stats = run_buckets(run);
  unpack_kernel<<<blocks_for(n), kBlock, 0, stream>>>(scratch.key.data(), n, dist, parent);
  CUDALAB_CHECK_LAUNCH();
  CUDALAB_CHECK(cudaStreamSynchronize(stream));
  return stats;
}

}  // namespace cudalab::sssp
