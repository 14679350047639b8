// Benchmark of cudalab::sort::merge_sort_merge_path at 2^20, 2^24 and 2^28
// int32 keys and key-value pairs, beside cub_merge_sort_keys / _pairs (the
// speed target: at least 1.0x at 2^24 and 2^28), cub_radix_sort_keys and
// the host's std::sort in the same run:
//   std_sort/int32/<n>, std_stable_sort/int32/<n>  the host's sorts, one core, wall-clock time
//                                                  (2^20 and 2^24 only; the copy to the host is
//                                                  untimed). Only this program registers them:
//                                                  they take seconds per run.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <utility>
#include <vector>

#include "sort_bench.cuh"

namespace {
using namespace cudalab::bench;
using namespace cudalab::bench::sort;

// The host's sorts on a copy of the same input, timed with the wall clock
// (registered as a device benchmark: the input comes from the device generator).
template <bool kStable>
void host_sort(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const std::vector<int> keys = input(n).download();
  std::vector<int> work(n);
  for (auto _ : state) {
    work = keys;  // untimed: restore the unsorted input
    const auto start = std::chrono::steady_clock::now();
    if constexpr (kStable) std::stable_sort(work.begin(), work.end());
    else std::sort(work.begin(), work.end());
    const auto stop = std::chrono::steady_clock::now();
    state.SetIterationTime(std::chrono::duration<double>(stop - start).count());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(2 * n * sizeof(int)));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(n));
  state.counters["n"] = static_cast<double>(n);
}

const bool registered = [] {
  cudalab::bench::sort::register_sort("merge_sort_merge_path", [](const int* in, std::size_t n, int* out,
                                                                  cudaStream_t s) {
    cudalab::sort::merge_sort_merge_path(in, n, out, s);
  });
  cudalab::bench::sort::register_pairs(
      "merge_sort_merge_path",
      [](const int* ki, const int* vi, std::size_t n, int* ko, int* vo, cudaStream_t s) {
        cudalab::sort::merge_sort_merge_path(ki, vi, n, ko, vo, s);
      });
  for (const auto& [name, fn] : {std::pair{"std_sort/int32", &host_sort<false>},
                                 std::pair{"std_stable_sort/int32", &host_sort<true>}}) {
    register_device_benchmark(name, fn)->Arg(1 << 20)->Arg(1 << 24)->Unit(benchmark::kMillisecond);
  }
  return true;
}();
}  // namespace
