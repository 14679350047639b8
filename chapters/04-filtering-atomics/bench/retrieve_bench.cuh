// Benchmark tables shared by exercise 4.7 (bench/retrieve_all_bench.cu) and
// its baselines (bench/retrieve_baselines_bench.cu): one device buffer of
// slots per size, about half of them live, an eighth erased, the rest empty,
// with new keys before every timed call (untimed); retrieve_all sees it as
// three sub-tables of 50 %, 30 % and 20 % of the slots (different
// capacities), the CUB baseline as one array. The last call's output is
// checked against the table (check_retrieved).
#pragma once

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "cudalab/bench.cuh"
#include "cudalab/filter.cuh"

namespace cudalab::bench::retrieve {

/// Total slots: 2 · 10^6 and 2 · 10^8 (the size of 4.7's goal: 3.2 GB of slots,
/// about 10^8 live int64 pairs).
inline const std::initializer_list<std::int64_t> kSlots = {2000000, 200000000};

namespace detail {
// Slot i of the table of `seed`: a live non-negative key (4 in 8), an erased
// (1 in 8) or an empty one (3 in 8); its value is i.
template <class S>
__global__ void fill_table_kernel(S* slots, std::size_t n, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::uint64_t x = mix64(seed ^ (i * 0x9E3779B97F4A7C15ull));
    const unsigned r = static_cast<unsigned>(x >> 61);  // 0 .. 7
    const long long key = r < 4 ? static_cast<long long>(x >> 2)  // live: 4 in 8, a non-negative key
                                : (r == 4 ? cudalab::filter::kErasedKey : cudalab::filter::kEmptyKey);
    slots[i] = S{key, static_cast<long long>(i)};
  }
}

// The SplitMix64 finalizer.
__host__ __device__ inline std::uint64_t mix(std::uint64_t x) {
  return mix64(x);
}

// A 64-bit hash of a (key, value) pair: summed, a fingerprint of a multiset of pairs.
__host__ __device__ inline unsigned long long pair_hash(long long key, long long value) {
  return mix(mix(static_cast<std::uint64_t>(key)) ^ (static_cast<std::uint64_t>(value) * 0x9E3779B97F4A7C15ull));
}
}  // namespace detail

/// Output pair i as separate arrays (retrieve_all's keys_out, values_out), hashed.
struct SplitPairs {
  const long long* keys;
  const long long* values;
  /// The pair_hash of output pair i.
  __host__ __device__ unsigned long long operator()(std::size_t i) const {
    return detail::pair_hash(keys[i], values[i]);
  }
};

/// Output pair i as a Slot (CUB's select), hashed.
struct SlotPairs {
  const cudalab::filter::Slot* slots;
  /// The pair_hash of output pair i.
  __host__ __device__ unsigned long long operator()(std::size_t i) const {
    return detail::pair_hash(slots[i].key, slots[i].value);
  }
};

/// The slots of the benchmark table with `n` slots (allocated once; refill_table gives them keys).
inline DeviceBuffer<cudalab::filter::Slot>& table(std::size_t n) {
  static std::map<std::size_t, DeviceBuffer<cudalab::filter::Slot>> cache;
  return cache.try_emplace(n, n).first->second;
}

/// Enqueues a new table in `slots` (keys and live, erased, empty pattern from a new seed). Work O(n).
inline void refill_table(DeviceBuffer<cudalab::filter::Slot>& slots, cudaStream_t stream) {
  if (slots.size() == 0) return;
  detail::fill_table_kernel<<<4 * sm_count(), 256, 0, stream>>>(slots.data(), slots.size(), next_seed());
  CUDALAB_CHECK_LAUNCH();
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

/// @brief "" when *count() is the number of live slots of table(n) and the
///        first *count() output pairs (`out(i)`: the pair_hash of pair i, here
///        retrieve_all's separate key and value arrays) are exactly its live
///        (key, value) pairs in any order (by a fingerprint of the multiset),
///        else what is wrong. Work O(n), on the device (Thrust count_if and
///        transform_reduce, on the default stream, waited for). Defined, with
///        the SlotPairs overload, in bench/retrieve_checks.cu, compiled once
///        per group (its BASELINES).
std::string check_retrieved(std::size_t n, SplitPairs out);

/// @brief check_retrieved for output pairs as Slots (CUB's select): the same
///        check, the same messages.
std::string check_retrieved(std::size_t n, SlotPairs out);

/// Registers "<name>/int64/<slots>": `run(n, stream)` retrieves from the
/// table of n slots. Bytes: 16 per slot read, 16 per live slot (about half)
/// written; items = slots examined. Before every call the table gets new
/// keys (untimed); `check(n)` verifies the last call's output ("" when right,
/// e.g. check_retrieved).
template <class Run, class Check>
bool register_retrieve(const std::string& name, Run run, Check check) {
  auto* b = register_device_benchmark(name + "/int64", [run, check](benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    DeviceBuffer<cudalab::filter::Slot>& slots = table(n);
    Fresh fresh;
    fresh.refresh = [&](cudaStream_t s) { refill_table(slots, s); };
    fresh.verify = [&] { return check(n); };
    time_runs(state, [&](cudaStream_t s) { run(n, s); }, 16 * n + 16 * (n / 2), n, fresh);
  });
  for (auto n : kSlots) b->Arg(n);
  return true;
}

}  // namespace cudalab::bench::retrieve
