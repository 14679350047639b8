// Benchmark of cudalab::heap::warp_heap (5.3): heap operations per second,
// beside the per-thread binary heap running the same scripts
// (binary_heap_per_thread in bench/heap_baselines_bench.cu).
#include "heap_bench.cuh"

namespace {

// "warp_heap/float32/<n>/<heaps>": every heap pushes n random keys, then
// pops n (heaps warps, one heap each). Items = operations (2 n heaps);
// bytes = operations read and steps written. New keys before every call;
// the last call's steps are checked step for step (fresh_scripts).
const bool registered = [] {
  auto* b = benchmark::RegisterBenchmark("warp_heap/float32", [](benchmark::State& state) {
    using namespace cudalab;
    if (!bench::require_device(state)) return;
    const auto n = static_cast<std::size_t>(state.range(0));
    const auto heaps = static_cast<std::size_t>(state.range(1));
    DeviceBuffer<heap::HeapOp>& ops = bench::heap::scripts(n, heaps);
    DeviceBuffer<heap::HeapStep> steps(2 * n * heaps);
    heap::HeapStorage storage(heaps, bench::heap::capacity_for(n));
    bench::time_runs(
        state, [&](cudaStream_t s) { heap::warp_heap(storage.view(), ops.data(), 2 * n, heaps, steps.data(), s); },
        bench::heap::script_bytes(2 * n * heaps), 2 * n * heaps, bench::heap::fresh_scripts(ops, steps, n, heaps));
  });
  for (const auto& [n, heaps] : cudalab::bench::heap::kHeapShapes) b->Args({n, heaps});
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
  return true;
}();

}  // namespace
