// Benchmark of cudalab::heap::replace_smallest (5.1) on 2^16 and 2^20 nodes,
// beside the copy bandwidth of the same bytes (bench/heap_baselines_bench.cu).
#include "heap_bench.cuh"

namespace {

// "replace_smallest/float32/<nodes>": one warp per node; the nodes stay
// sorted from run to run (replace_smallest keeps them so). Items = nodes;
// bytes = nodes read and written (2 x 256 B each) plus x read and the
// evicted entry written (16 B).
const bool registered = [] {
  auto* b = benchmark::RegisterBenchmark("replace_smallest/float32", [](benchmark::State& state) {
    using namespace cudalab;
    if (!bench::require_device(state)) return;
    const auto n = static_cast<std::size_t>(state.range(0));
    // Node w: keys 32 w + l (sorted), values l; x = 32 w + 15.5 lands mid-node.
    std::vector<float> keys(n * heap::node_size), xk(n);
    std::vector<int> values(n * heap::node_size), xv(n, 7);
    for (std::size_t w = 0; w < n; ++w) {
      for (int l = 0; l < heap::node_size; ++l) {
        keys[w * heap::node_size + l] = static_cast<float>(w * heap::node_size + l);
        values[w * heap::node_size + l] = l;
      }
      xk[w] = static_cast<float>(w * heap::node_size) + 15.5f;
    }
    DeviceBuffer<float> d_keys(keys), d_xk(xk), d_ek(n);
    DeviceBuffer<int> d_values(values), d_xv(xv), d_ev(n);
    bench::time_runs(
        state,
        [&](cudaStream_t s) {
          heap::replace_smallest(d_keys.data(), d_values.data(), n, d_xk.data(), d_xv.data(), d_ek.data(),
                                 d_ev.data(), s);
        },
        n * (2 * heap::node_size * 8 + 16), n);
  });
  for (auto n : cudalab::bench::heap::kNodeSizes) b->Arg(n);
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
  return true;
}();

}  // namespace
