// Benchmark of cudalab::heap::dijkstra_warp_heap (5.4): 1024 sources on the
// New York road graph (or a generated graph of its size), and on the road
// network of Luxembourg when luxembourg_osm.mtx is in CUDALAB_DATA_DIR
// ("dijkstra_warp_heap/luxembourg_osm_w1to100/114599/1024"), beside Boost.Graph's
// Dijkstra on one host core and on all of them
// (bench/paths_baselines_bench.cpp) in the same run.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <climits>
#include <string>
#include <vector>

#include "cudalab/bench.cuh"
#include "cudalab/heap.cuh"
#include "heap_bench.cuh"
#include "paths_bench.hpp"

namespace {

using cudalab::bench::heap::detail::mix;
using cudalab::graph::dist64_t;
using cudalab::graph::kUnreachable;
using cudalab::graph::offset_t;
using cudalab::graph::vertex_t;
using cudalab::graph::weight_t;

// New weights: each edge's weight in the graph times a random factor in
// [1/2, 3/2), clamped to [lo, hi] (lo ≥ 1), so roads stay about as long as
// they were (the Boost baselines search the graph's own weights).
__global__ void jitter_weights_kernel(weight_t* weights, const weight_t* base, std::size_t m, std::uint64_t seed,
                                      weight_t lo, weight_t hi) {
  for (std::size_t e = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; e < m;
       e += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const long long b = base[e] > 0 ? base[e] : 0;
    const long long w = b / 2 + static_cast<long long>((static_cast<unsigned long long>(b) *
                                                        (mix(seed, e) & 0xFFFFFFFFull)) >> 32);
    weights[e] = static_cast<weight_t>(w < lo ? lo : w > hi ? hi : w);
  }
}

// The certificate of shortest distances (as Graph500 validates SSSP), edge
// part, for every row s (source sources[s]): one warp per tail u and row;
// for every edge (u, v, w) with dist[u] finite, counts in bad[0] the edges
// with dist[v] > dist[u] + w, and marks v in `tight` (row s) where dist[v]
// == dist[u] + w.
__global__ void certificate_edges_kernel(const offset_t* rows, const vertex_t* cols, const weight_t* weights,
                                         std::size_t n, std::size_t k, const dist64_t* dist, unsigned char* tight,
                                         unsigned long long* bad) {
  const unsigned lane = threadIdx.x % 32;
  const std::size_t warps = static_cast<std::size_t>(gridDim.x) * (blockDim.x / 32);
  unsigned long long loose = 0;
  for (std::size_t s = blockIdx.y; s < k; s += gridDim.y) {
    const dist64_t* d = dist + s * n;
    for (std::size_t u = (blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x) / 32; u < n;
         u += warps) {
      const dist64_t du = d[u];
      if (du == kUnreachable) continue;
      // A 64-bit edge index: in 32 bits, rows[u] + lane wraps past 2^32 - 1.
      for (std::size_t e = rows[u] + static_cast<std::size_t>(lane); e < rows[u + 1]; e += 32) {
        const auto v = static_cast<std::size_t>(cols[e]);
        const weight_t w = weights[e];
        const dist64_t sum = du > LLONG_MAX - w ? LLONG_MAX : du + w;  // w ≥ 1
        const dist64_t dv = d[v];
        if (dv == kUnreachable || dv > sum) {
          ++loose;
        } else if (dv == sum) {
          tight[s * n + v] = 1;
        }
      }
    }
  }
  if (loose != 0) atomicAdd(&bad[0], loose);
}

// The certificate, vertex part: in every row s, dist[source] = 0 (else
// bad[1]), and every other vertex of finite distance has a tight in-edge
// (else bad[2]). With weights ≥ 1 a tight in-edge leads, edge by edge, to a
// vertex of smaller distance, so back to the source: the distance is that of
// a real path, and by the edge part no path is shorter; unreached vertices
// hold kUnreachable (a finite value there has no path to back it).
__global__ void certificate_vertices_kernel(std::size_t n, const vertex_t* sources, std::size_t k,
                                            const dist64_t* dist, const unsigned char* tight,
                                            unsigned long long* bad) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < k * n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t s = i / n, v = i % n;
    if (v == static_cast<std::size_t>(sources[s])) {
      if (dist[i] != 0) atomicAdd(&bad[1], 1ull);
    } else if (dist[i] != kUnreachable && tight[i] == 0) {
      atomicAdd(&bad[2], 1ull);
    }
  }
}

// "dijkstra_warp_heap/int32/264346/1024" (and ".../luxembourg_osm_w1to100/
// 114599/1024"): all distances from 1024 sources,
// one warp and one heap of 1024 nodes (32,768 entries) per source. The graph
// keeps its edges; before every call its edges get new weights (jitter
// above); after the last call every row of distances is checked by the
// certificate above, and every flag must be 0. Items = sources x vertices
// (distances computed); bytes = the distance rows written once (each run
// reads the graph at least once per source, uncounted).
// One benchmark: all distances from the sources `src` on `g`, labelled `label`.
void run_paths(benchmark::State& state, const cudalab::graph::Csr& g, const std::vector<vertex_t>& src,
               const std::string& label) {
  using namespace cudalab;
  if (!bench::require_device(state)) return;
  const std::size_t n = g.num_vertices(), k = src.size(), m = g.num_edges();
  const DeviceBuffer<offset_t> rows(g.row_offsets);
  const DeviceBuffer<vertex_t> cols(g.col_indices);
  const DeviceBuffer<weight_t> base(g.weights);
  DeviceBuffer<weight_t> weights(m);
  const graph::CsrView view{n, m, rows.data(), cols.data(), weights.data(), false};
  weight_t lo = 1, hi = 1;
  if (m > 0) {
    const auto [min_w, max_w] = std::minmax_element(g.weights.begin(), g.weights.end());
    lo = std::max<weight_t>(1, *min_w);
    hi = std::max(lo, *max_w);
  }
  const DeviceBuffer<vertex_t> d_sources(src);
  DeviceBuffer<dist64_t> dist(k * n);
  DeviceBuffer<unsigned> flags(k);
  heap::HeapStorage storage(k, 1024);
  bench::Fresh fresh;
  fresh.refresh = [&](cudaStream_t s) {
    if (m == 0) return;
    jitter_weights_kernel<<<4 * sm_count(), 256, 0, s>>>(weights.data(), base.data(), m, bench::next_seed(), lo,
                                                         hi);
    CUDALAB_CHECK_LAUNCH();
  };
  fresh.verify = [&]() -> std::string {
    const auto f = flags.download();
    if (std::any_of(f.begin(), f.end(), [](unsigned x) { return x != 0; }))
      return "flags != 0 (a heap overflowed): the distances are not valid; raise the capacity";
    DeviceBuffer<unsigned long long> bad(std::vector<unsigned long long>{0, 0, 0});
    DeviceBuffer<unsigned char> tight(k * n);
    tight.fill_bytes(0);
    const dim3 grid(std::max<unsigned>(1, std::min<unsigned>(256, static_cast<unsigned>((n + 7) / 8))),
                    static_cast<unsigned>(std::min<std::size_t>(k, 65535)));
    if (k > 0) {
      certificate_edges_kernel<<<grid, 256>>>(rows.data(), cols.data(), weights.data(), n, k, dist.data(),
                                              tight.data(), bad.data());
      CUDALAB_CHECK_LAUNCH();
      certificate_vertices_kernel<<<8 * sm_count(), 256>>>(n, d_sources.data(), k, dist.data(), tight.data(),
                                                           bad.data());
      CUDALAB_CHECK_LAUNCH();
    }
    const std::vector<unsigned long long> w = bad.download();
    if (w[1] != 0) return std::to_string(w[1]) + " of " + std::to_string(k) + " rows have dist[source] != 0";
    if (w[0] != 0) return std::to_string(w[0]) + " edges (u, v, w) have dist[v] > dist[u] + w (a row too long)";
    if (w[2] != 0)
      return std::to_string(w[2]) + " finite distances have no in-edge (u, v, w) with dist[v] = dist[u] + w "
                                    "(no path of that length; or unreached, not kUnreachable)";
    return "";
  };
  state.SetLabel(label);  // before time_runs: a wrong output's message replaces it
  bench::time_runs(
      state,
      [&](cudaStream_t s) {
        heap::dijkstra_warp_heap(view, d_sources.data(), k, nullptr, 0, dist.data(), flags.data(), storage.view(),
                                 nullptr, s);
      },
      k * n * sizeof(dist64_t), k * n, fresh);
}

const bool registered = [] {
  namespace paths = cudalab::bench::paths;
  auto* b = benchmark::RegisterBenchmark("dijkstra_warp_heap/int32", [](benchmark::State& state) {
    run_paths(state, paths::road_graph(), paths::sources(), paths::graph_label());
  });
  b->Args({paths::kVertices, paths::kSources});
  b->UseManualTime()->Unit(benchmark::kMillisecond);
  if (paths::have_luxembourg()) {
    const std::string name = std::string("dijkstra_warp_heap/") + cudalab::graph::kLuxembourgName;
    auto* lux = benchmark::RegisterBenchmark(name.c_str(), [](benchmark::State& state) {
      run_paths(state, paths::luxembourg_graph(), paths::luxembourg_sources(), paths::luxembourg_label());
    });
    lux->Args({static_cast<std::int64_t>(cudalab::graph::kLuxembourgVertices), paths::kSources});
    lux->UseManualTime()->Unit(benchmark::kMillisecond);
  }
  return true;
}();

}  // namespace
