// Benchmark of cudalab::kdtree::build_large_nodes (7.6): the whole
// large-node stage on 2,000,000 uniform points with T = 32 (the issue's
// case), beside the chapter's baselines in the same run. The counters
// level_<l>_ms give the GPU time of every level of one extra, timed build
// (the per-level breakdown of the lesson). The stage synchronizes after every
// level, so the time includes those round trips.
//   cpu_reference_build/float3/<n>  7.6's baseline: the serial reference builder (reference::build,
//                                   T = 32) on one host core, wall-clock time. A host baseline, so
//                                   7.6's target is a speed-up over it (the issue's: 100). Only this
//                                   program registers it: it takes about a second per run.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kdtree_bench.cuh"

namespace {

// The CPU reference builder on the benchmark's points, timed with the wall clock.
void cpu_reference_build(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  static const std::vector<float3> points = cudalab::bench::kdtree::uniform_points(n);
  std::size_t nodes = 0;
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    nodes = cudalab::reference::build(points, 32, 64).nodes.size();
    state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(n));
  state.counters["n"] = static_cast<double>(n);
  state.counters["nodes"] = static_cast<double>(nodes);
}

const bool registered = [] {
  benchmark::RegisterBenchmark("cpu_reference_build/float3", cpu_reference_build)
      ->Arg(cudalab::bench::kdtree::kPoints)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond);
  auto* b = benchmark::RegisterBenchmark("build_large_nodes/float3", [](benchmark::State& state) {
    if (!cudalab::bench::require_device(state)) return;
    const auto n = static_cast<std::size_t>(state.range(0));
    static const cudalab::DeviceBuffer<float3> points(cudalab::bench::kdtree::uniform_points(n));
    const std::size_t capacity = 2 * n / 16 + 1024;  // well above the 176,773 nodes of this input
    static cudalab::DeviceBuffer<cudalab::kdtree::Node> nodes(capacity);
    static cudalab::DeviceBuffer<int> small(capacity);
    static cudalab::DeviceBuffer<std::uint32_t> leaf(n);
    auto build = [&](cudaStream_t s, bool timed) {
      return cudalab::kdtree::build_large_nodes(points.data(), n, 32, 64, nodes.data(), capacity, small.data(),
                                                leaf.data(), s, timed);
    };
    cudalab::bench::time_runs(state, [&](cudaStream_t s) { build(s, false); }, n * sizeof(float3), n);
    const cudalab::kdtree::LargeNodeStage stage = build(nullptr, true);
    state.counters["nodes"] = static_cast<double>(stage.nodes);
    state.counters["levels"] = static_cast<double>(stage.levels.size());
    for (std::size_t l = 0; l < stage.levels.size(); ++l)
      state.counters["level_" + std::string(l < 10 ? "0" : "") + std::to_string(l) + "_ms"] = stage.levels[l].ms;
  });
  b->Arg(cudalab::bench::kdtree::kPoints)->UseManualTime()->Unit(benchmark::kMillisecond);
  return true;
}();

}  // namespace
