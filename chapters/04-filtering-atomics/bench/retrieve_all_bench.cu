// Benchmark of exercise 4.7, cudalab::filter::retrieve_all, over 2 · 10^6 and
// 2 · 10^8 slots in three sub-tables (about half live), beside the baselines
// (bench/retrieve_baselines_bench.cu: cub_select_live) in the same run.
#include <map>

#include "retrieve_bench.cuh"

namespace {
const bool registered = cudalab::bench::retrieve::register_retrieve("retrieve_all", [](std::size_t n, cudaStream_t s) {
  static std::map<std::size_t, cudalab::DeviceBuffer<long long>> outputs;  // keys, then values
  cudalab::DeviceBuffer<long long>& out = outputs.try_emplace(n, 2 * n).first->second;
  const auto tables = cudalab::bench::retrieve::sub_tables(n);
  cudalab::filter::retrieve_all(tables.data(), tables.size(), out.data(), out.data() + n, n,
                                cudalab::bench::retrieve::count(), s);
});
}  // namespace
