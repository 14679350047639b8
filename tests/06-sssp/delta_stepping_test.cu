// Tests of exercise 6.4, cudalab::sssp::delta_stepping (suites
// SsspDeltaStepping*): the shared battery (sssp_test_battery.cuh) with
// parents checked as a shortest-path tree, with delta = the graph's mean
// weight (at least 1), suite SsspDeltaSteppingWidths with other bucket
// widths: 1 (Dijkstra-like), small, huge (one bucket: Bellman-Ford-like),
// and its LargeIndex case: the source's edges are the last of 2^32 - 1,
// walked by one thread (2 edges), a warp (40) or the block (300); in 32
// bits, the warp's and the block's e += stride wrap.
// Run: tools/grade 6.4   or   build/default/bin/delta_stepping_test_starter
#include <algorithm>
#include <cmath>

#include "sssp_test_battery.cuh"

namespace cudalab::test::sssp {
namespace {

cudalab::sssp::dist_t g_delta = 0;  // 0: the graph's mean weight

cudalab::sssp::dist_t delta_for(const Csr& g) {
  if (g_delta != 0) return g_delta;
  double sum = 0;
  for (weight_t w : g.weights) sum += w;
  const double mean = g.num_edges() ? sum / static_cast<double>(g.num_edges()) : 1.0;
  return static_cast<cudalab::sssp::dist_t>(std::max(1.0, std::round(mean)));
}

Outcome run_view(const graph::CsrView& g, vertex_t source, cudalab::sssp::dist_t delta) {
  const std::size_t n = g.num_vertices;
  DeviceBuffer<cudalab::sssp::dist_t> dist = guarded_output<cudalab::sssp::dist_t>(n);
  DeviceBuffer<vertex_t> parent = guarded_output<vertex_t>(n);
  Outcome o;
  o.stats = cudalab::sssp::delta_stepping(g, source, delta, dist.data(), parent.data(), nullptr);
  CUDALAB_CHECK(cudaDeviceSynchronize());
  o.dist = widen(download_guarded(dist, n, o.guard_damage));
  o.parent = download_guarded(parent, n, o.guard_damage);
  return o;
}

// The LargeIndex graph with delta = 4: the source's last edge (weight 3) is
// light and its others (weight 5) heavy, so both phases walk its edges.
Outcome run_view_delta4(const graph::CsrView& g, vertex_t source) { return run_view(g, source, 4); }

const Spec& spec() {
  static const Spec s{
      "6.4 delta_stepping", false, true, std::numeric_limits<std::size_t>::max(),
      "relax light edges (w <= delta) phase after phase until the bucket stays empty, then heavy edges once; a "
      "vertex whose distance fell goes to the next frontier (same bucket) or the far list (later bucket)",
      [](const Csr& g, vertex_t source) {
        const graph::DeviceCsr d(g);
        return run_view(d.view(), source, delta_for(g));
      },
      [](const RawArgs& a) {
        cudalab::sssp::delta_stepping(raw_view(a), a.source, 10, static_cast<cudalab::sssp::dist_t*>(a.dist),
                                      a.parent, nullptr);
      }};
  return s;
}

CUDALAB_SSSP_BATTERY(SsspDeltaStepping, spec)
CUDALAB_SSSP_LARGE_INDEX(SsspDeltaStepping, spec, run_view_delta4)

TEST(SsspDeltaSteppingArgs, DeltaZeroThrows) {
  RawArgs a;
  std::vector<cudalab::sssp::dist_t> host(4, 7);
  EXPECT_THROW(cudalab::sssp::delta_stepping(raw_view(a), 0, 0, host.data(), a.parent, nullptr),
               std::invalid_argument);
  EXPECT_EQ(host, std::vector<cudalab::sssp::dist_t>(4, 7));
}

// Stats::buckets and Stats::iterations on two graphs small enough to count by
// hand (no test looked at them before), delta = 1:
// - a path 0 -> 1 -> ... -> 9 of weight-1 (light) edges: each vertex is a
//   bucket of its own, settled by one light phase (its edge leads to the next
//   bucket, through the far list) and one heavy phase: 10 buckets, 20 phases;
// - 0 -> 1 (10, heavy), 0 -> 2 (1), 2 -> 1 (0): vertex 1 waits in the far list
//   at 10 when bucket [1, 2) lowers it to 1 and settles it there, with two
//   light phases and a heavy one. The far list still holds 1, now below the
//   next bucket's start: the search for the next bucket finds nothing, and
//   that is no bucket. 2 buckets, 5 phases.
class SsspDeltaSteppingStats : public GpuTest {};

TEST_F(SsspDeltaSteppingStats, BucketsAndPhasesCounted) {
  struct Case {
    const char* what;
    Csr g;
    std::uint64_t buckets, iterations;
  };
  std::vector<Edge> path;
  for (vertex_t v = 0; v < 9; ++v) path.push_back(Edge{v, v + 1, 1});
  const std::vector<Case> cases = {
      {"a path of 10 vertices, weights 1", graph::csr_from_edges(10, path), 10, 20},
      {"0 -> 1 (10), 0 -> 2 (1), 2 -> 1 (0): 1 leaves the far list's bucket for bucket [1, 2)",
       graph::csr_from_edges(3, {{0, 1, 10}, {0, 2, 1}, {2, 1, 0}}), 2, 5}};
  for (const Case& c : cases) {
    const std::string ctx = context(spec().exercise, c.g.num_vertices(), 0) + c.what + ", delta = 1: ";
    const graph::DeviceCsr d(c.g);
    const Outcome got = run_view(d.view(), 0, 1);
    ASSERT_EQ(got.guard_damage, "") << ctx << got.guard_damage;
    ASSERT_EQ(graph::dijkstra_reference(c.g, 0).dist, got.dist) << ctx << "wrong distances";
    EXPECT_EQ(c.buckets, got.stats.buckets)
        << ctx << "Stats::buckets counts the buckets processed: one per bucket whose first frontier the far list "
        << "gave. Count a bucket after far_min_kernel found one (smallest < kInfinity), not each time the loop "
        << "looks for one: when the far list holds only vertices already settled, there is no bucket.";
    EXPECT_EQ(c.iterations, got.stats.iterations)
        << ctx << "Stats::iterations counts the light phases and the heavy phases: every expand_kernel launch.";
  }
}

class SsspDeltaSteppingWidths : public GpuTestWithParam<cudalab::sssp::dist_t> {
 protected:
  void TearDown() override {
    g_delta = 0;
    GpuTestWithParam<cudalab::sssp::dist_t>::TearDown();
  }
};

// check_graph with g_delta, after reporting vertices x buckets to
// CUDALAB_SKIP_IF_ABOVE_MAX_N: a run takes at most one bucket (a few
// launches and host round trips) per delta-wide slice of the distance range,
// and no more than the reachable vertices, so sanitizer runs skip the graphs
// of thousands of buckets and keep the rest.
void check_width(const Csr& g, vertex_t source, std::uint64_t s, const std::string& what) {
  const auto d = graph::dijkstra_reference(g, source).dist;
  dist64_t largest = 0;
  std::size_t reached = 0;
  for (const dist64_t x : d)
    if (x != kUnreachable) {
      largest = std::max(largest, x);
      ++reached;
    }
  const auto buckets = std::min<std::size_t>(reached, static_cast<std::size_t>(largest / g_delta) + 1);
  CUDALAB_SKIP_IF_ABOVE_MAX_N(round_work(g.num_vertices(), buckets));
  check_graph(spec(), g, source, s, what);
}

// Graphs of a few thousand vertices: with delta = 1 every distinct distance
// is a bucket (thousands of them, each a few launches).
TEST_P(SsspDeltaSteppingWidths, SeveralGraphs) {
  g_delta = GetParam();
  const auto s = seed();
  const std::string w = "delta = " + std::to_string(GetParam()) + ": ";
  check_width(graph::random_geometric(5000, 6.0, s, 1, 1000), 5, s, w + "random geometric graph");
  if (HasFatalFailure()) return;
  check_width(graph::rmat(13, 8, s, 0, 100), 0, s, w + "R-MAT scale 13, weights 0..100");
  if (HasFatalFailure()) return;
  check_width(reference::random_multigraph(3000, 12000, s, 0, 3), 1, s, w + "weights 0..3");
  if (HasFatalFailure()) return;
  check_width(graph::grid_2d(100, 100, s, 1, 1000, 0.8), 0, s, w + "thinned grid 100 x 100");
}

INSTANTIATE_TEST_SUITE_P(Widths, SsspDeltaSteppingWidths,
                         ::testing::Values(1u, 3u, 37u, 1000u, 100000u, 0x7FFFFFFFu, 0xFFFFFFFEu),
                         [](const ::testing::TestParamInfo<cudalab::sssp::dist_t>& info) {
                           return "delta" + std::to_string(info.param);
                         });

}  // namespace
}  // namespace cudalab::test::sssp
