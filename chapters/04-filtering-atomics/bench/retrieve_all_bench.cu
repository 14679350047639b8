// Benchmark of exercise 4.7, cudalab::filter::retrieve_all, over 2 · 10^6 and
// 2 · 10^8 slots in three sub-tables (about half live), beside the baselines
// (bench/retrieve_baselines_bench.cu: cub_select_live) in the same run. New
// keys before every call; the last call's keys and values are checked.
#include <map>

#include "retrieve_bench.cuh"

namespace {

// The output of the table of n slots: n keys, then n values.
cudalab::DeviceBuffer<long long>& output(std::size_t n) {
  static std::map<std::size_t, cudalab::DeviceBuffer<long long>> outputs;
  return outputs.try_emplace(n, 2 * n).first->second;
}

const bool registered = cudalab::bench::retrieve::register_retrieve(
    "retrieve_all",
    [](std::size_t n, cudaStream_t s) {
      cudalab::DeviceBuffer<long long>& out = output(n);
      const auto tables = cudalab::bench::retrieve::sub_tables(n);
      cudalab::filter::retrieve_all(tables.data(), tables.size(), out.data(), out.data() + n, n,
                                    cudalab::bench::retrieve::count(), s);
    },
    [](std::size_t n) {
      const long long* out = output(n).data();
      return cudalab::bench::retrieve::check_retrieved(n, cudalab::bench::retrieve::SplitPairs{out, out + n});
    });

}  // namespace
