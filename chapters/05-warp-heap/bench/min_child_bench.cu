// Benchmark of cudalab::heap::min_child (5.2) for 2^16 and 2^20 parents,
// beside the copy bandwidth of the same bytes (bench/heap_baselines_bench.cu).
#include <string>
#include <vector>

#include "heap_bench.cuh"

namespace {

using cudalab::bench::heap::detail::mix;
using cudalab::heap::entry_less;
using cudalab::heap::node_size;

// New tops for every node: keys uniform integers in [0, 1024) as floats
// (equal keys among 32 children are common, so the values decide), values
// uniform in [0, 2^24) (equal tops are rare: the index decides).
__global__ void fill_tops_kernel(float* keys, int* values, std::size_t nodes, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < nodes;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    keys[i] = static_cast<float>(mix(seed, 2 * i) & 1023);
    values[i] = static_cast<int>(mix(seed, 2 * i + 1) & 0xFFFFFF);
  }
}

// One thread per query: the child of parents[q] with the smallest top by
// entry_less(), the smallest index among equal tops, −1 without a child;
// counts the answers that differ.
__global__ void check_children_kernel(const float* keys, const int* values, std::size_t nodes, const int* parents,
                                      std::size_t queries, const int* children, unsigned long long* wrong) {
  for (std::size_t q = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; q < queries;
       q += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const long long p = parents[q];
    long long best = -1;
    if (p >= 0 && static_cast<std::size_t>(p) < nodes) {
      for (long long c = node_size * p + 1; c <= node_size * p + node_size && static_cast<std::size_t>(c) < nodes;
           ++c)
        if (best < 0 || entry_less(keys[c], values[c], keys[best], values[best])) best = c;
    }
    if (children[q] != best) atomicAdd(wrong, 1ull);
  }
}

// "min_child/float32/<queries>": parents 0 .. q - 1 of a heap of 32 q + 1
// nodes, so every top is read once. New tops before every call; the last
// call's children are checked. Items = queries; bytes = the tops read (8 B
// each) plus a parent read and a child written per query.
const bool registered = [] {
  auto* b = benchmark::RegisterBenchmark("min_child/float32", [](benchmark::State& state) {
    using namespace cudalab;
    if (!bench::require_device(state)) return;
    const auto q = static_cast<std::size_t>(state.range(0));
    const std::size_t nodes = q * node_size + 1;
    DeviceBuffer<float>& keys = bench::fresh_buffer<float>(nodes);
    DeviceBuffer<int>& values = bench::fresh_buffer<int>(nodes);
    std::vector<int> parents(q);
    for (std::size_t i = 0; i < q; ++i) parents[i] = static_cast<int>(i);
    const DeviceBuffer<int> d_parents(parents);
    DeviceBuffer<int> out(q);
    bench::Fresh fresh;
    fresh.refresh = [&](cudaStream_t s) {
      fill_tops_kernel<<<4 * sm_count(), 256, 0, s>>>(keys.data(), values.data(), nodes, bench::next_seed());
      CUDALAB_CHECK_LAUNCH();
    };
    fresh.verify = [&]() -> std::string {
      DeviceBuffer<unsigned long long> wrong(std::vector<unsigned long long>{0});
      check_children_kernel<<<4 * sm_count(), 256>>>(keys.data(), values.data(), nodes, d_parents.data(), q,
                                                      out.data(), wrong.data());
      CUDALAB_CHECK_LAUNCH();
      const unsigned long long w = wrong.download()[0];
      return w == 0 ? "" : std::to_string(w) + " of " + std::to_string(q) + " children are wrong";
    };
    bench::time_runs(
        state,
        [&](cudaStream_t s) {
          heap::min_child(keys.data(), values.data(), nodes, d_parents.data(), q, out.data(), s);
        },
        nodes * 8 + q * 8, q, fresh);
  });
  for (auto n : cudalab::bench::heap::kNodeSizes) b->Arg(n);
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
  return true;
}();

}  // namespace
