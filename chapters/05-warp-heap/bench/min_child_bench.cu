// Benchmark of cudalab::heap::min_child (5.2) for 2^16 and 2^20 parents,
// beside the copy bandwidth of the same bytes (bench/heap_baselines_bench.cu).
#include "heap_bench.cuh"

namespace {

// "min_child/float32/<queries>": parents 0 .. q - 1 of a heap of 32 q + 1
// nodes, so every top is read once. Items = queries; bytes = the tops read
// (8 B each) plus a parent read and a child written per query.
const bool registered = [] {
  auto* b = benchmark::RegisterBenchmark("min_child/float32", [](benchmark::State& state) {
    using namespace cudalab;
    if (!bench::require_device(state)) return;
    const auto q = static_cast<std::size_t>(state.range(0));
    const std::size_t nodes = q * heap::node_size + 1;
    const DeviceBuffer<int>& tops = bench::cached_uniform_ints<int>(nodes, 55, 0, 1 << 24);
    const DeviceBuffer<int>& values = bench::cached_uniform_ints<int>(nodes, 56, 0, 1 << 24);
    std::vector<int> parents(q);
    for (std::size_t i = 0; i < q; ++i) parents[i] = static_cast<int>(i);
    const DeviceBuffer<int> d_parents(parents);
    DeviceBuffer<int> out(q);
    // The integer keys are read as floats: any bit pattern of a positive
    // int below 2^24 is a small positive float, never NaN.
    const auto* keys = reinterpret_cast<const float*>(tops.data());
    bench::time_runs(
        state, [&](cudaStream_t s) { heap::min_child(keys, values.data(), nodes, d_parents.data(), q, out.data(), s); },
        nodes * 8 + q * 8, q);
  });
  for (auto n : cudalab::bench::heap::kNodeSizes) b->Arg(n);
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
  return true;
}();

}  // namespace
