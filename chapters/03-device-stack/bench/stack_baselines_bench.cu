// Baselines of chapter 3, linked into every exercise's benchmark program so
// that each run measures them beside the exercise:
//   atomic_same_address/int32/<n>/<stride>              every stride-th thread does atomicAdd(counter, 1);
//                                                      nvcc aggregates these per warp by itself
//   atomic_same_address_unaggregated/int32/<n>/<stride> the same, with an increment the compiler cannot see
//                                                      (read from memory): one hardware atomic per thread
//   atomic_distinct_addresses/int32/<n>/<stride>        every stride-th thread increments its own counter
//   cub_expand_scan/int32/<nodes>                      the tree expansion of 3.4 with a CUB scan per level
//                                                      (registered as 3.4: new tree before every call, checked)
//   copy_bandwidth/int32/<n>                           device-to-device copy (the memory ceiling)
#include <cub/device/device_scan.cuh>
#include <thrust/count.h>
#include <thrust/execution_policy.h>
#include <thrust/iterator/counting_iterator.h>

#include <string>

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
/// `prepare(n, stream)` runs before every run, untimed; `check(n, stride)`
/// verifies the counters the last run left ("" when right).
template <class Launch, class Prepare, class Check>
void register_atomic(const std::string& name, Launch launch, std::size_t bytes_per_atomic, Prepare prepare,
                     Check check) {
  auto* b = register_device_benchmark(
      name + "/int32", [launch, bytes_per_atomic, prepare, check](benchmark::State& state) {
        const auto n = static_cast<std::size_t>(state.range(0));
        const auto stride = static_cast<unsigned>(state.range(1));
        const std::size_t atomics = (n + stride - 1) / stride;
        Fresh fresh;
        fresh.refresh = [&](cudaStream_t s) { prepare(n, s); };
        fresh.verify = [&] { return check(n, stride); };
        time_runs(state, [&](cudaStream_t s) { launch(n, stride, s); }, atomics * bytes_per_atomic, atomics, fresh);
        state.counters["n"] = static_cast<double>(n);  // the size in the name: threads, not atomics
      });
  for (auto n : kSizes)
    for (auto stride : kStrides) b->Args({n, stride});
}

DeviceBuffer<unsigned long long>& counter() {
  static DeviceBuffer<unsigned long long> c(1);
  return c;
}

/// The per-thread counters of atomic_distinct_addresses, one buffer per n.
DeviceBuffer<unsigned>& distinct_counters(std::size_t n) {
  static std::map<std::size_t, DeviceBuffer<unsigned>> counters;
  return counters.try_emplace(n, n).first->second;
}

/// "" when the shared counter holds the number of atomics, else what it holds.
std::string check_counter(std::size_t n, unsigned stride) {
  unsigned long long got = 0;
  CUDALAB_CHECK(cudaMemcpy(&got, counter().data(), sizeof got, cudaMemcpyDeviceToHost));
  const std::size_t want = (n + stride - 1) / stride;
  if (got != want) return "counter " + std::to_string(got) + ", expected " + std::to_string(want);
  return "";
}

// True at i when counter i is not 1 for a thread that adds, 0 for one that does not.
struct WrongCounter {
  const unsigned* counters;
  unsigned stride;
  __host__ __device__ bool operator()(std::size_t i) const { return counters[i] != (i % stride == 0 ? 1u : 0u); }
};

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

// The atomic baselines have no input to renew: before every run the
// distinct counters are zeroed (untimed; the shared counter's reset is part
// of the timed run), and the last run's counters are checked.
const bool registered = [] {
  const auto nothing = [](std::size_t, cudaStream_t) {};
  register_atomic("atomic_same_address", [](std::size_t n, unsigned stride, cudaStream_t s) {
    CUDALAB_CHECK(cudaMemsetAsync(counter().data(), 0, sizeof(unsigned long long), s));
    same_address_kernel<<<blocks_for(n), kBlock, 0, s>>>(counter().data(), n, stride);
    CUDALAB_CHECK_LAUNCH();
  }, 0, nothing, check_counter);
  register_atomic("atomic_same_address_unaggregated", [](std::size_t n, unsigned stride, cudaStream_t s) {
    static DeviceBuffer<int> sink(1);
    const DeviceBuffer<int>& ones = cached_uniform_ints<int>(n, 1, 1, 1);
    CUDALAB_CHECK(cudaMemsetAsync(counter().data(), 0, sizeof(unsigned long long), s));
    same_address_unaggregated_kernel<<<blocks_for(n), kBlock, 0, s>>>(counter().data(), ones.data(), n, stride,
                                                                      sink.data());
    CUDALAB_CHECK_LAUNCH();
  }, sizeof(int), nothing, check_counter);
  register_atomic(
      "atomic_distinct_addresses",
      [](std::size_t n, unsigned stride, cudaStream_t s) {
        distinct_addresses_kernel<<<blocks_for(n), kBlock, 0, s>>>(distinct_counters(n).data(), n, stride);
        CUDALAB_CHECK_LAUNCH();
      },
      2 * sizeof(unsigned),
      [](std::size_t n, cudaStream_t s) {
        CUDALAB_CHECK(cudaMemsetAsync(distinct_counters(n).data(), 0, n * sizeof(unsigned), s));
      },
      [](std::size_t n, unsigned stride) -> std::string {
        const thrust::counting_iterator<std::size_t> first(0);
        const auto wrong =
            thrust::count_if(thrust::device, first, first + n, WrongCounter{distinct_counters(n).data(), stride});
        return wrong == 0 ? "" : std::to_string(wrong) + " counters wrong";
      });
  register_expand("cub_expand_scan", &cub_expand);
  register_copy_bandwidth<int>("int32", kSizes);
  return true;
}();

}  // namespace
}  // namespace cudalab::bench::stack
