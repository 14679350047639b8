// Benchmark tables shared by exercise 4.7 (bench/retrieve_all_bench.cu) and
// its baselines (bench/retrieve_baselines_bench.cu): one device buffer of
// slots per size, generated once, about half of them live, an eighth erased,
// the rest empty; retrieve_all sees it as three sub-tables of 50 %, 30 % and
// 20 % of the slots (different capacities), the CUB baseline as one array.
#pragma once

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "cudalab/bench.cuh"
#include "cudalab/filter.cuh"

namespace cudalab::bench::retrieve {

/// Total slots: 2 · 10^6 and 2 · 10^8 (the issue's size: 3.2 GB of slots,
/// about 10^8 live int64 pairs).
inline const std::initializer_list<std::int64_t> kSlots = {2000000, 200000000};

namespace detail {
template <class S>
__global__ void fill_table_kernel(S* slots, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    std::uint64_t x = 77 ^ (i * 0x9E3779B97F4A7C15ull);
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    x ^= x >> 31;
    const unsigned r = static_cast<unsigned>(x >> 61);  // 0 .. 7
    const long long key = r < 4 ? static_cast<long long>(x >> 2)  // live: 4 in 8, a non-negative key
                                : (r == 4 ? cudalab::filter::kErasedKey : cudalab::filter::kEmptyKey);
    slots[i] = S{key, static_cast<long long>(i)};
  }
}
}  // namespace detail

/// The slots of the benchmark table with `n` slots (generated once).
inline const DeviceBuffer<cudalab::filter::Slot>& table(std::size_t n) {
  static std::map<std::size_t, DeviceBuffer<cudalab::filter::Slot>> cache;
  auto it = cache.find(n);
  if (it == cache.end()) {
    DeviceBuffer<cudalab::filter::Slot> slots(n);
    detail::fill_table_kernel<<<4 * sm_count(), 256>>>(slots.data(), n);
    CUDALAB_CHECK_LAUNCH();
    CUDALAB_CHECK(cudaDeviceSynchronize());
    it = cache.emplace(n, std::move(slots)).first;
  }
  return it->second;
}

/// The three sub-tables (50 %, 30 %, 20 % of the slots, back to back).
inline std::vector<cudalab::filter::SubTable> sub_tables(std::size_t n) {
  const cudalab::filter::Slot* s = table(n).data();
  const std::size_t a = n / 2, b = n / 10 * 3;
  return {{s, a}, {s + a, b}, {s + a + b, n - a - b}};
}

/// The device count both write.
inline unsigned long long* count() {
  static DeviceBuffer<unsigned long long> c(1);
  return c.data();
}

/// Registers "<name>/int64/<slots>": `run(n, stream)` retrieves from the
/// table of n slots. Bytes: 16 per slot read, 16 per live slot (about half)
/// written; items = slots examined.
template <class Run>
bool register_retrieve(const std::string& name, Run run) {
  auto* b = benchmark::RegisterBenchmark((name + "/int64").c_str(), [run](benchmark::State& state) {
    if (!require_device(state)) return;
    const auto n = static_cast<std::size_t>(state.range(0));
    table(n);  // generated outside the timed runs
    time_runs(state, [&](cudaStream_t s) { run(n, s); }, 16 * n + 16 * (n / 2), n);
  });
  for (auto n : kSlots) b->Arg(n);
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
  return true;
}

}  // namespace cudalab::bench::retrieve
