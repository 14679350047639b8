// Baselines of chapter 3, linked into every exercise's benchmark program so
// that each run measures them beside the exercise:
//   atomic_same_address/int32/<n>/<stride>              every stride-th thread does atomicAdd(counter, 1);
//                                                      nvcc aggregates these per warp by itself
//   atomic_same_address_unaggregated/int32/<n>/<stride> the same, with an increment the compiler cannot see
//                                                      (read from memory): one hardware atomic per thread
//   atomic_distinct_addresses/int32/<n>/<stride>        every stride-th thread increments its own counter
//   cub_expand_scan/int32/<nodes>                      the tree expansion of 3.4 with a CUB scan per level
//   copy_bandwidth/int32/<n>                           device-to-device copy (the memory ceiling)
#include <cub/device/device_scan.cuh>

#include "stack_bench.cuh"

namespace cudalab::bench::stack {
namespace {

constexpr int kBlock = 256;

__global__ void same_address_kernel(unsigned long long* counter, std::size_t n, unsigned stride) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n && i % stride == 0) atomicAdd(counter, 1ull);
}

__global__ void same_address_unaggregated_kernel(unsigned long long* counter, const int* __restrict__ ones,
                                                 std::size_t n, unsigned stride, int* sink) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n && i % stride == 0) {
    // The increment is data the compiler cannot see (always 1), so it emits
    // one ATOMG per thread instead of a warp-aggregated one; the old value is
    // used, as a push uses its slot.
    const unsigned long long old = atomicAdd(counter, static_cast<unsigned long long>(ones[i] & 1));
    if (old == ~0ull) *sink = 1;
  }
}

__global__ void distinct_addresses_kernel(unsigned* counters, std::size_t n, unsigned stride) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n && i % stride == 0) atomicAdd(counters + i, 1u);
}

unsigned blocks_for(std::size_t n) { return static_cast<unsigned>((n + kBlock - 1) / kBlock); }

/// Registers one atomic baseline "<name>/int32/<n>/<stride>"; items = atomics.
template <class Launch>
void register_atomic(const std::string& name, Launch launch, std::size_t bytes_per_atomic) {
  auto* b = benchmark::RegisterBenchmark((name + "/int32").c_str(), [launch, bytes_per_atomic](benchmark::State& state) {
    if (!require_device(state)) return;
    const auto n = static_cast<std::size_t>(state.range(0));
    const auto stride = static_cast<unsigned>(state.range(1));
    const std::size_t atomics = (n + stride - 1) / stride;
    time_runs(state, [&](cudaStream_t s) { launch(n, stride, s); }, atomics * bytes_per_atomic, atomics);
    state.counters["n"] = static_cast<double>(n);  // the size in the name: threads, not atomics
  });
  for (auto n : kSizes)
    for (auto stride : kStrides) b->Args({n, stride});
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
}

DeviceBuffer<unsigned long long>& counter() {
  static DeviceBuffer<unsigned long long> c(1);
  return c;
}

// --- the CUB expansion: per level, count children, scan the counts, scatter.

__global__ void count_children_kernel(const int* __restrict__ active, std::size_t n, cudalab::stack::TreeRule rule,
                                      int* __restrict__ counts, int* __restrict__ visited) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const int v = active[i];
  visited[i] = v;
  counts[i] = static_cast<int>(cudalab::stack::has_child(rule, v, 0)) +
              static_cast<int>(cudalab::stack::has_child(rule, v, 1));
}

__global__ void scatter_children_kernel(const int* __restrict__ active, std::size_t n,
                                        cudalab::stack::TreeRule rule, const int* __restrict__ offsets,
                                        int* __restrict__ next) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const int v = active[i];
  int o = offsets[i];
  if (cudalab::stack::has_child(rule, v, 0)) next[o++] = 2 * v;
  if (cudalab::stack::has_child(rule, v, 1)) next[o] = 2 * v + 1;
}

std::vector<std::size_t> cub_expand(const int* roots, std::size_t n_roots, cudalab::stack::TreeRule rule,
                                    int* visited, std::size_t visited_capacity, cudaStream_t stream) {
  static std::map<std::size_t, DeviceBuffer<int>> scratch;  // lists, counts, offsets: 4 x capacity (+1)
  DeviceBuffer<int>& buf = scratch.try_emplace(visited_capacity, 4 * visited_capacity + 2).first->second;
  int* lists[2] = {buf.data(), buf.data() + visited_capacity};
  int* counts = buf.data() + 2 * visited_capacity;
  int* offsets = buf.data() + 3 * visited_capacity + 1;
  static int* pinned = nullptr;
  if (pinned == nullptr) CUDALAB_CHECK(cudaMallocHost(&pinned, 2 * sizeof(int)));
  std::vector<std::size_t> level_offsets{0};
  const int* active = roots;
  std::size_t n = n_roots;
  int fill = 0;
  while (n > 0) {
    count_children_kernel<<<blocks_for(n), kBlock, 0, stream>>>(active, n, rule, counts, visited + level_offsets.back());
    CUDALAB_CHECK_LAUNCH();
    std::size_t bytes = 0;
    CUDALAB_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, counts, offsets, static_cast<int>(n), stream));
    CUDALAB_CHECK(cub::DeviceScan::ExclusiveSum(temp_storage(bytes), bytes, counts, offsets, static_cast<int>(n), stream));
    CUDALAB_CHECK(cudaMemcpyAsync(pinned, offsets + n - 1, sizeof(int), cudaMemcpyDeviceToHost, stream));
    CUDALAB_CHECK(cudaMemcpyAsync(pinned + 1, counts + n - 1, sizeof(int), cudaMemcpyDeviceToHost, stream));
    scatter_children_kernel<<<blocks_for(n), kBlock, 0, stream>>>(active, n, rule, offsets, lists[fill]);
    CUDALAB_CHECK_LAUNCH();
    CUDALAB_CHECK(cudaStreamSynchronize(stream));
    level_offsets.push_back(level_offsets.back() + n);
    n = static_cast<std::size_t>(pinned[0] + pinned[1]);
    active = lists[fill];
    fill = 1 - fill;
  }
  return level_offsets;
}

const bool registered = [] {
  register_atomic("atomic_same_address", [](std::size_t n, unsigned stride, cudaStream_t s) {
    CUDALAB_CHECK(cudaMemsetAsync(counter().data(), 0, sizeof(unsigned long long), s));
    same_address_kernel<<<blocks_for(n), kBlock, 0, s>>>(counter().data(), n, stride);
    CUDALAB_CHECK_LAUNCH();
  }, 0);
  register_atomic("atomic_same_address_unaggregated", [](std::size_t n, unsigned stride, cudaStream_t s) {
    static DeviceBuffer<int> sink(1);
    const DeviceBuffer<int>& ones = cached_uniform_ints<int>(n, 1, 1, 1);
    CUDALAB_CHECK(cudaMemsetAsync(counter().data(), 0, sizeof(unsigned long long), s));
    same_address_unaggregated_kernel<<<blocks_for(n), kBlock, 0, s>>>(counter().data(), ones.data(), n, stride,
                                                                      sink.data());
    CUDALAB_CHECK_LAUNCH();
  }, sizeof(int));
  register_atomic("atomic_distinct_addresses", [](std::size_t n, unsigned stride, cudaStream_t s) {
    static std::map<std::size_t, DeviceBuffer<unsigned>> counters;
    DeviceBuffer<unsigned>& c = counters.try_emplace(n, n).first->second;
    distinct_addresses_kernel<<<blocks_for(n), kBlock, 0, s>>>(c.data(), n, stride);
    CUDALAB_CHECK_LAUNCH();
  }, 2 * sizeof(unsigned));
  register_expand("cub_expand_scan", &cub_expand);
  register_copy_bandwidth<int>("int32", kSizes);
  return true;
}();

}  // namespace
}  // namespace cudalab::bench::stack
