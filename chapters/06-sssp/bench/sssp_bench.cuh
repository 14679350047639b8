// Shared pieces of chapter 6's benchmarks: the benchmark graphs (built once
// per program on the host and cached, with their device copies), and the
// registration of an exercise or baseline on a list of graphs.
//
// Graphs (benchmark names "<slug>/<graph>/<n>[/<delta>]"):
//   road_ny/264346    USA-road-d.NY.gr from CUDALAB_DATA_DIR; when absent, a
//                     generated road-like graph of the same size (a 514 x 514
//                     grid with 69 % of its edges kept, weights 1..2000), and
//                     the label says so
//   road_bay, road_col, road_fla, road_usa   registered only when their file
//                     is in CUDALAB_DATA_DIR (6.4 and its baseline)
//   luxembourg_osm_w1to100/114599   luxembourg_osm.mtx (the road network of
//                     Luxembourg, unweighted) from CUDALAB_DATA_DIR, every
//                     exercise and its baseline, registered only when the file
//                     is there; its own lengths 1..100 come from the seeded
//                     hash of each vertex pair (cudalab/graph/road_data.hpp:
//                     what the Boost baseline searches), and the new weights
//                     before every call are uniform in 1..100 like the others
//   grid/<n>          a sqrt(n) x sqrt(n) grid, weights uniform in 1..1000
//   rmat22/4194304    R-MAT scale 22, 16 edges per vertex (67,108,864 edges),
//                     weights 1..1000
// Every benchmark reports items/s = graph edges per second of the whole
// search (m / time), and the counters iterations (and buckets for 6.4).
// Before every timed call the edges get new weights (refresh_weights(): the
// graph's structure and source stay, so no answer of an earlier call is
// right again), and the last call's distances are checked by the shortest
// path certificate (check_distances()). The Boost baselines
// (sssp_baselines.cuh) run on the host on the graphs' own weights.
#pragma once

#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cudalab/bench.cuh"
#include "cudalab/device_buffer.cuh"
#include "cudalab/graph/csr.cuh"
#include "cudalab/graph/csr.hpp"
#include "cudalab/graph/generators.hpp"
#include "cudalab/graph/io.hpp"
#include "cudalab/graph/road_data.hpp"
#include "cudalab/sssp.cuh"

namespace cudalab::bench::sssp {

/// A benchmark graph on the host, with its source vertex and a label, and
/// the weights its edges get before every timed call (refresh_weights()).
struct BenchGraph {
  graph::Csr csr;
  graph::vertex_t source = 0;
  std::string label;        // where it came from
  double mean_weight = 1.0;
  /// New weights lie in [min_weight, max_weight], min_weight ≥ 1: the
  /// generator's range, or that of the file (its smallest weight raised to 1).
  graph::weight_t min_weight = 1;
  /// @copydoc min_weight
  graph::weight_t max_weight = 1;
  /// true (DIMACS files): a new weight is the file's times a random factor
  /// in [1/2, 3/2), clamped to the range, so long roads stay long; false
  /// (generated graphs): uniform in the range, the generator's distribution.
  bool jitter = false;
};

/// The real road graphs this chapter knows, by benchmark graph name.
struct RoadFile {
  const char* name;
  const char* file;
  std::size_t vertices;
};
inline const std::vector<RoadFile>& road_files() {
  static const std::vector<RoadFile> files = {
      {"road_ny", "USA-road-d.NY.gr", 264346},    {"road_bay", "USA-road-d.BAY.gr", 321270},
      {"road_col", "USA-road-d.COL.gr", 435666},  {"road_fla", "USA-road-d.FLA.gr", 1070376},
      {"road_usa", "USA-road-d.USA.gr", 23947347},
  };
  return files;
}

inline double mean_weight(const graph::Csr& g) {
  double sum = 0;
  for (graph::weight_t w : g.weights) sum += static_cast<double>(w);
  return g.num_edges() ? sum / static_cast<double>(g.num_edges()) : 1.0;
}

/// Builds the graph `name` of `n` vertices (see the file comment).
inline BenchGraph make_graph(const std::string& name, std::size_t n) {
  BenchGraph out;
  for (const RoadFile& f : road_files()) {
    if (name != f.name) continue;
    if (const auto path = graph::find_data_file(f.file)) {
      out.csr = graph::load_dimacs_gr(*path);
      out.label = std::string("DIMACS ") + f.file;
      out.jitter = true;
      if (out.csr.num_edges() > 0) {
        const auto [lo, hi] = std::minmax_element(out.csr.weights.begin(), out.csr.weights.end());
        out.min_weight = std::max<graph::weight_t>(1, *lo);
        out.max_weight = std::max(out.min_weight, *hi);
      }
    } else {
      const auto side = static_cast<std::size_t>(std::lround(std::sqrt(static_cast<double>(f.vertices))));
      out.csr = graph::grid_2d(side, side, 0x726F6164ull, 1, 2000, 0.69);
      out.max_weight = 2000;
      out.label = std::string("generated road-like grid ") + std::to_string(side) + "x" + std::to_string(side) +
                  " (69% of edges kept): " + f.file + " not in CUDALAB_DATA_DIR (tools/fetch-data)";
    }
    out.source = 0;
    out.mean_weight = mean_weight(out.csr);
    return out;
  }
  if (name == graph::kLuxembourgName) {
    std::optional<graph::Csr> lux = graph::load_luxembourg_osm();
    if (!lux) throw std::invalid_argument(std::string(graph::kLuxembourgFile) + " is not in CUDALAB_DATA_DIR");
    out.csr = std::move(*lux);
    out.min_weight = graph::kRoadMinWeight;
    out.max_weight = graph::kRoadMaxWeight;
    out.source = 0;
    out.label = std::string(graph::kLuxembourgFile) + ", lengths 1..100 hashed per road (new uniform 1..100 per call)";
  } else if (name == "grid") {
    const auto side = static_cast<std::size_t>(std::lround(std::sqrt(static_cast<double>(n))));
    out.csr = graph::grid_2d(side, side, 0x67726964ull, 1, 1000);
    out.max_weight = 1000;
    out.source = static_cast<graph::vertex_t>((side / 2) * side + side / 2);  // the centre
    out.label = "grid " + std::to_string(side) + "x" + std::to_string(side) + ", weights 1..1000";
  } else if (name == "rmat22") {
    out.csr = graph::rmat(22, 16, 0x726D6174ull, 1, 1000);
    out.max_weight = 1000;
    out.source = 0;  // the largest hub
    out.label = "R-MAT scale 22, 16 edges per vertex, weights 1..1000";
  } else {
    throw std::invalid_argument("sssp bench: unknown graph " + name);
  }
  out.mean_weight = mean_weight(out.csr);
  return out;
}

/// The graph `name`/`n`, built on first use and kept for the program's life.
inline const BenchGraph& bench_graph(const std::string& name, std::size_t n) {
  static std::map<std::string, std::unique_ptr<BenchGraph>> cache;
  const std::string key = name + "/" + std::to_string(n);  // a named key: no temporary bound (GCC 13)
  auto& slot = cache[key];
  if (!slot) slot = std::make_unique<BenchGraph>(make_graph(name, n));
  return *slot;
}

/// How an exercise reads its graph.
enum class Layout {
  out_csr,  ///< out-edges in CSR (6.1 to 6.4)
  in_csr,   ///< in-edges (the transpose) in CSR (6.5)
  in_ell,   ///< in-edges in ELL, column-major, padded (6.6)
};

/// One layout of a benchmark graph in device memory, owned by the benchmark
/// so that its weights can be rewritten before every call; the views give
/// has_negative_weights = false (new weights are ≥ 1).
struct DeviceLayout {
  Layout layout = Layout::out_csr;       ///< what the arrays hold
  std::size_t rows = 0;                  ///< n
  std::size_t width = 0;                 ///< ELL: the padded row length
  DeviceBuffer<graph::offset_t> offsets; ///< CSR: n + 1 row offsets
  DeviceBuffer<graph::vertex_t> cols;    ///< CSR: m heads (out) or tails (in); ELL: n · width, kPadding in padding
  DeviceBuffer<graph::weight_t> weights; ///< what the exercise reads, rewritten by refresh_weights()
  DeviceBuffer<graph::weight_t> base;    ///< the graph's own weights, kept where they are jittered (else empty)

  /// @return the CSR view (CSR layouts).
  graph::CsrView csr() const {
    return graph::CsrView{rows, cols.size(), offsets.data(), cols.data(), weights.data(), false};
  }
  /// @return the ELL view (the ELL layout).
  graph::EllView ell_view() const { return graph::EllView{rows, width, cols.data(), weights.data(), false}; }
};

/// @brief The device copy of graph `name`/`n` in `layout`, made on first use
///        and kept for the program's life (the ELL one from the transpose).
/// @throws std::invalid_argument when the ELL padding would exceed 2^28
///         entries (remembered: later calls throw at once).
inline DeviceLayout& device_layout(const std::string& name, std::size_t n, Layout layout) {
  static std::map<std::string, std::unique_ptr<DeviceLayout>> cache;
  static std::map<std::string, std::string> refused;
  const std::string key = name + "/" + std::to_string(n) + "/" + std::to_string(static_cast<int>(layout));
  if (const auto it = refused.find(key); it != refused.end()) throw std::invalid_argument(it->second);
  auto& slot = cache[key];
  if (!slot) {
    const BenchGraph& g = bench_graph(name, n);
    auto d = std::make_unique<DeviceLayout>();
    d->layout = layout;
    graph::Ell e;
    graph::Csr transposed;
    const std::vector<graph::weight_t>* weights = &g.csr.weights;
    if (layout == Layout::in_ell) {
      try {
        e = graph::to_ell(graph::transpose(g.csr));
      } catch (const std::invalid_argument& err) {
        refused[key] = std::string("no ELL for this graph: ") + err.what();
        throw std::invalid_argument(refused[key]);
      }
      d->rows = e.num_rows;
      d->width = e.width;
      d->cols = DeviceBuffer<graph::vertex_t>(e.col_indices);
      weights = &e.weights;
    } else {
      if (layout == Layout::in_csr) transposed = graph::transpose(g.csr);
      const graph::Csr& c = layout == Layout::in_csr ? transposed : g.csr;
      d->rows = c.num_vertices();
      d->offsets = DeviceBuffer<graph::offset_t>(c.row_offsets);
      d->cols = DeviceBuffer<graph::vertex_t>(c.col_indices);
      weights = &c.weights;
    }
    d->weights = DeviceBuffer<graph::weight_t>(*weights);
    if (g.jitter) d->base = DeviceBuffer<graph::weight_t>(*weights);
    slot = std::move(d);
  }
  return *slot;
}

/// A device array of n elements of T for outputs, kept per (type, n).
template <class T>
T* output(std::size_t n) {
  static std::map<std::size_t, DeviceBuffer<T>> cache;
  auto it = cache.find(n);
  if (it == cache.end()) it = cache.emplace(n, DeviceBuffer<T>(n)).first;
  return it->second.data();
}

namespace detail {
/// 64 random bits for element `i` of the stream `seed` (SplitMix64, callable on the device).
__host__ __device__ inline std::uint64_t mix(std::uint64_t seed, std::uint64_t i) {
  return mix64(seed ^ (i * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull));
}

// New weights (see BenchGraph): uniform in [lo, hi], or base times a factor
// in [1/2, 3/2) clamped to [lo, hi] when base is given; ELL padding (cols
// given, entry kPadding) keeps weight 0.
template <class W>
__global__ void refresh_weights_kernel(W* weights, const W* base, const graph::vertex_t* cols, std::size_t count,
                                       std::uint64_t seed, W lo, W hi) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    if (cols != nullptr && cols[i] == graph::Ell::kPadding) {
      weights[i] = 0;
      continue;
    }
    const std::uint64_t r = mix(seed, i);
    long long w;
    if (base != nullptr) {
      const long long b = base[i] > 0 ? base[i] : 0;
      w = b / 2 + static_cast<long long>((static_cast<unsigned long long>(b) * (r & 0xFFFFFFFFull)) >> 32);
      w = w < lo ? lo : w > hi ? hi : w;
    } else {
      w = lo + static_cast<long long>(__umul64hi(r, static_cast<std::uint64_t>(hi - lo) + 1));
    }
    weights[i] = static_cast<W>(w);
  }
}

// One edge (u, v, w) of the certificate (as Graph500 validates SSSP): with
// dist[u] finite, dist[v] > dist[u] + w counts in `loose`; dist[v] ==
// dist[u] + w marks v tight, and parent-tight when parent[v] == u. w ≥ 1.
template <class D>
__device__ inline void check_edge(graph::vertex_t u, graph::vertex_t v, graph::weight_t w, const D* dist, D inf,
                                  const graph::vertex_t* parent, unsigned char* tight, unsigned char* parent_tight,
                                  unsigned long long& loose) {
  const D du = dist[u];
  if (du == inf) return;
  const auto a = static_cast<long long>(du);
  const long long sum = a > LLONG_MAX - w ? LLONG_MAX : a + w;
  const D dv = dist[v];
  if (dv == inf || static_cast<long long>(dv) > sum) {
    ++loose;
  } else if (static_cast<long long>(dv) == sum) {
    tight[v] = 1;
    if (parent != nullptr && parent[v] == u) parent_tight[v] = 1;
  }
}

// The certificate's edge part over a CSR: one warp per row; row r lists the
// edges r -> c (out-edges) or c -> r (kIn: in-edges). Loose edges count in bad[0].
template <class D, bool kIn>
__global__ void certificate_csr_kernel(const graph::offset_t* offsets, const graph::vertex_t* cols,
                                       const graph::weight_t* weights, std::size_t n, const D* dist, D inf,
                                       const graph::vertex_t* parent, unsigned char* tight,
                                       unsigned char* parent_tight, unsigned long long* bad) {
  const unsigned lane = threadIdx.x % 32;
  const std::size_t warps = static_cast<std::size_t>(gridDim.x) * (blockDim.x / 32);
  unsigned long long loose = 0;
  for (std::size_t r = (blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x) / 32; r < n; r += warps) {
    // A 64-bit edge index: in 32 bits, offsets[r] + lane wraps past 2^32 - 1.
    for (std::size_t e = offsets[r] + static_cast<std::size_t>(lane); e < offsets[r + 1]; e += 32) {
      const auto row = static_cast<graph::vertex_t>(r);
      check_edge(kIn ? cols[e] : row, kIn ? row : cols[e], weights[e], dist, inf, parent, tight, parent_tight,
                 loose);
    }
  }
  if (loose != 0) atomicAdd(&bad[0], loose);
}

// The same over in-edges in ELL: one thread per row, padding skipped.
template <class D>
__global__ void certificate_ell_kernel(const graph::vertex_t* cols, const graph::weight_t* weights, std::size_t n,
                                       std::size_t width, const D* dist, D inf, const graph::vertex_t* parent,
                                       unsigned char* tight, unsigned char* parent_tight, unsigned long long* bad) {
  unsigned long long loose = 0;
  for (std::size_t r = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; r < n;
       r += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    for (std::size_t k = 0; k < width; ++k) {
      const graph::vertex_t c = cols[k * n + r];
      if (c == graph::Ell::kPadding) continue;
      check_edge(c, static_cast<graph::vertex_t>(r), weights[k * n + r], dist, inf, parent, tight, parent_tight,
                 loose);
    }
  }
  if (loose != 0) atomicAdd(&bad[0], loose);
}

// The certificate's vertex part: dist[source] = 0 (else bad[1]); every other
// vertex of finite distance has a tight in-edge (else bad[2]); with parents:
// kNoParent at the source and at unreached vertices, and the edge
// (parent[v], v) tight at the others (else bad[3]).
template <class D>
__global__ void certificate_vertices_kernel(std::size_t n, graph::vertex_t source, const D* dist, D inf,
                                            const graph::vertex_t* parent, const unsigned char* tight,
                                            const unsigned char* parent_tight, unsigned long long* bad) {
  for (std::size_t v = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; v < n;
       v += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const bool is_source = v == static_cast<std::size_t>(source);
    const bool reached = dist[v] != inf;
    if (is_source && dist[v] != 0) atomicAdd(&bad[1], 1ull);
    if (!is_source && reached && tight[v] == 0) atomicAdd(&bad[2], 1ull);
    if (parent != nullptr && ((is_source || !reached) ? parent[v] != cudalab::sssp::kNoParent : parent_tight[v] == 0))
      atomicAdd(&bad[3], 1ull);
  }
}
}  // namespace detail

/// @brief Enqueues new weights for every edge of `d` (see BenchGraph:
///        uniform in the graph's range, or its own weights jittered), from a
///        new seed; the structure stays. Work O(m), on the device.
inline void refresh_weights(DeviceLayout& d, const BenchGraph& g, cudaStream_t stream) {
  if (d.weights.size() == 0) return;
  detail::refresh_weights_kernel<graph::weight_t><<<4 * sm_count(), 256, 0, stream>>>(
      d.weights.data(), g.jitter ? d.base.data() : nullptr, d.layout == Layout::in_ell ? d.cols.data() : nullptr,
      d.weights.size(),
      next_seed(), g.min_weight, g.max_weight);
  CUDALAB_CHECK_LAUNCH();
}

/// @brief "" when `dist` (and `parent`, unless null) are the shortest
///        distances (and a shortest-path tree) from `source` over the edges
///        of `d` as they are now, else what is wrong. The certificate, as
///        Graph500 validates SSSP: dist[source] = 0; dist[v] ≤ dist[u] + w
///        for every edge (u, v, w) with dist[u] finite; every other vertex of
///        finite distance has an in-edge with dist[v] = dist[u] + w. With
///        weights ≥ 1, following such edges lowers the distance at each step,
///        so it ends at the source: the distance is a real path's, and no
///        path is shorter; a finite value at an unreached vertex cannot be
///        backed so, which leaves `inf` (the contract's infinity) there.
///        Parents: kNoParent at the source and unreached vertices, else the
///        tail of such a tight edge. Work O(n + m), on the device.
template <class D>
std::string check_distances(const DeviceLayout& d, graph::vertex_t source, const D* dist, D inf,
                            const graph::vertex_t* parent) {
  const std::size_t n = d.rows;
  DeviceBuffer<unsigned long long> bad(std::vector<unsigned long long>(4, 0));
  DeviceBuffer<unsigned char> flags(2 * n);
  flags.fill_bytes(0);
  unsigned char* tight = flags.data();
  unsigned char* parent_tight = flags.data() + n;
  const auto blocks = static_cast<unsigned>(32 * sm_count());
  if (d.layout == Layout::in_ell) {
    detail::certificate_ell_kernel<D><<<blocks, 256>>>(d.cols.data(), d.weights.data(), n, d.width, dist, inf,
                                                       parent, tight, parent_tight, bad.data());
  } else if (d.layout == Layout::in_csr) {
    detail::certificate_csr_kernel<D, true><<<blocks, 256>>>(d.offsets.data(), d.cols.data(), d.weights.data(), n,
                                                             dist, inf, parent, tight, parent_tight, bad.data());
  } else {
    detail::certificate_csr_kernel<D, false><<<blocks, 256>>>(d.offsets.data(), d.cols.data(), d.weights.data(), n,
                                                              dist, inf, parent, tight, parent_tight, bad.data());
  }
  CUDALAB_CHECK_LAUNCH();
  detail::certificate_vertices_kernel<D><<<blocks, 256>>>(n, source, dist, inf, parent, tight, parent_tight,
                                                          bad.data());
  CUDALAB_CHECK_LAUNCH();
  const std::vector<unsigned long long> w = bad.download();
  if (w[1] != 0) return "dist[source] != 0";
  if (w[0] != 0) return std::to_string(w[0]) + " edges (u, v, w) have dist[v] > dist[u] + w (a distance too long)";
  if (w[2] != 0)
    return std::to_string(w[2]) + " finite distances have no in-edge (u, v, w) with dist[v] = dist[u] + w (no path "
                                  "of that length, or an unreached vertex not at infinity)";
  if (w[3] != 0)
    return std::to_string(w[3]) + " parents wrong (not the tail of a tight in-edge; or not kNoParent at the "
                                  "source or an unreached vertex)";
  return "";
}

/// A graph to benchmark on: its name and vertex count in the benchmark name.
struct GraphSpec {
  std::string name;
  std::size_t n;
};

/// What an exercise runs: one full search of the graph (the host graph for
/// its source and mean weight, the device layout the exercise reads) into
/// `dist` (and `parent`, for 6.4; null elsewhere), on the stream; returns its Stats.
template <class D>
using Run = std::function<cudalab::sssp::Stats(const BenchGraph&, const DeviceLayout&, D* dist,
                                               graph::vertex_t* parent, cudaStream_t)>;

/// @brief Registers "<slug>/<graph>/<n><suffix>" for each graph: timed by
///        time_runs (the checker's clock for a remote call, L2 flushed),
///        items = edges, bytes = one read of the CSR plus one write of the
///        distances, counters iterations and buckets. Before every call the
///        edges of `layout` get new weights (refresh_weights(), the structure
///        and the source stay); after the last call its distances (and
///        parents, when `parents`) are checked by check_distances(), and no
///        negative cycle may be reported (every weight is ≥ 1).
/// @tparam D the distance type: sssp::dist_t (infinity kInfinity) or
///           sssp::signed_dist_t (kSignedInfinity)
template <class D>
void register_exercise(const std::string& slug, const std::vector<GraphSpec>& graphs, Layout layout, Run<D> run,
                       const std::string& suffix = "", bool parents = false) {
  static_assert(cudalab::sssp::kInfinity == std::numeric_limits<cudalab::sssp::dist_t>::max() &&
                    cudalab::sssp::kSignedInfinity == std::numeric_limits<cudalab::sssp::signed_dist_t>::max(),
                "the infinity of each distance type is its largest value");
  for (const GraphSpec& spec : graphs) {
    const std::string full = slug + "/" + spec.name + "/" + std::to_string(spec.n) + suffix;
    register_device_benchmark(full, [spec, layout, run, parents](benchmark::State& state) {
      const BenchGraph& g = bench_graph(spec.name, spec.n);
      state.SetLabel(g.label);
      cudalab::sssp::Stats last;
      try {
        DeviceLayout& d = device_layout(spec.name, spec.n, layout);  // made on first use
        const std::size_t m = g.csr.num_edges(), n = g.csr.num_vertices();
        D* dist = output<D>(n);
        graph::vertex_t* parent = parents ? output<graph::vertex_t>(n) : nullptr;
        Fresh fresh;
        fresh.refresh = [&](cudaStream_t s) { refresh_weights(d, g, s); };
        fresh.verify = [&]() -> std::string {
          if (last.negative_cycle) return "a negative cycle reported, but every weight is >= 1";
          return check_distances<D>(d, g.source, dist, std::numeric_limits<D>::max(), parent);
        };
        time_runs(
            state, [&](cudaStream_t s) { last = run(g, d, dist, parent, s); }, 8 * m + 4 * (n + 1) + 8 * n, m,
            fresh);
      } catch (const std::invalid_argument& e) {
        state.SkipWithError(e.what());
        return;
      }
      state.counters["n"] = static_cast<double>(spec.n);  // the name's size (time_runs set it to m)
      state.counters["iterations"] = static_cast<double>(last.iterations);
      state.counters["buckets"] = static_cast<double>(last.buckets);
      state.counters["vertices"] = static_cast<double>(g.csr.num_vertices());
      state.counters["edges"] = static_cast<double>(g.csr.num_edges());
    })->Unit(benchmark::kMillisecond);
  }
}

/// @brief register_exercise for an exercise called as
///        `f(edges, source, dist, stream)` that writes no parents (6.1, 6.2,
///        6.3, 6.5, 6.6): `edges` is the layout's CSR view, or its ELL view
///        where `f` takes a graph::EllView (Layout::in_ell).
/// @tparam D     the distance type, as in register_exercise
/// @tparam Edges graph::CsrView or graph::EllView
/// @param slug   the exercise's slug: the benchmarks are "<slug>/<graph>/<n>"
/// @param graphs the graphs to run on
/// @param layout the layout of the edges `f` reads
/// @param f      the exercise's function
/// @return true, for a namespace-scope `const bool registered = ...`.
template <class D, class Edges>
bool register_distances(const std::string& slug, const std::vector<GraphSpec>& graphs, Layout layout,
                        cudalab::sssp::Stats (*f)(Edges, graph::vertex_t, D*, cudaStream_t)) {
  register_exercise<D>(slug, graphs, layout,
                       [f](const BenchGraph& g, const DeviceLayout& edges, D* dist, graph::vertex_t*, cudaStream_t s) {
                         if constexpr (std::is_same_v<Edges, graph::EllView>) {
                           return f(edges.ell_view(), g.source, dist, s);
                         } else {
                           return f(edges.csr(), g.source, dist, s);
                         }
                       });
  return true;
}

/// The Luxembourg road network, when luxembourg_osm.mtx is in CUDALAB_DATA_DIR
/// (a list of one graph), else nothing: every exercise's list ends with it.
inline std::vector<GraphSpec> present_luxembourg() {
  if (!graph::find_data_file(graph::kLuxembourgFile)) return {};
  return {{graph::kLuxembourgName, graph::kLuxembourgVertices}};
}

/// The graphs of 6.1 (quadratic work: small ones only), and Luxembourg's roads when present.
inline std::vector<GraphSpec> dijkstra_graphs() {
  std::vector<GraphSpec> out = {{"road_ny", 264346}, {"grid", 65536}};
  for (const GraphSpec& g : present_luxembourg()) out.push_back(g);
  return out;
}
/// The graphs of the Bellman-Ford exercises 6.2, 6.3, 6.5 and 6.6 (their
/// rounds grow with the hop diameter: the 2^24 grid would take minutes).
/// road_ny and grid/65536 are common to every exercise, grid/1048576 and
/// rmat22 to all but 6.1; Luxembourg's roads, when present, to all.
inline std::vector<GraphSpec> bellman_ford_graphs() {
  std::vector<GraphSpec> out = {{"road_ny", 264346}, {"grid", 65536}, {"grid", 1048576}, {"rmat22", 4194304}};
  for (const GraphSpec& g : present_luxembourg()) out.push_back(g);
  return out;
}
/// The graphs of 6.4 (its speed goals, and the smaller graphs of the
/// other exercises, so that one table compares them all), plus the real road
/// graphs present (the large DIMACS ones, then Luxembourg's).
inline std::vector<GraphSpec> present_large_roads();
inline std::vector<GraphSpec> delta_graphs() {
  std::vector<GraphSpec> out = {
      {"road_ny", 264346}, {"grid", 65536}, {"grid", 1048576}, {"grid", 16777216}, {"rmat22", 4194304}};
  for (const GraphSpec& g : present_large_roads()) out.push_back(g);
  for (const GraphSpec& g : present_luxembourg()) out.push_back(g);
  return out;
}

/// The real road graphs (other than NY) present in CUDALAB_DATA_DIR.
inline std::vector<GraphSpec> present_large_roads() {
  std::vector<GraphSpec> out;
  for (const RoadFile& f : road_files())
    if (std::string(f.name) != "road_ny" && graph::find_data_file(f.file)) out.push_back({f.name, f.vertices});
  return out;
}

}  // namespace cudalab::bench::sssp
