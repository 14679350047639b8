// Benchmark inputs shared by exercises 5.1 to 5.3. Every exercise's bench
// program also links bench/heap_baselines_bench.cu, so the copy bandwidth
// and the per-thread binary heap are measured in the same run. The scripts
// of 5.3 (and of its baseline) get new keys before every timed call, and the
// last call's steps are checked (fresh_scripts).
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "cudalab/bench.cuh"
#include "cudalab/generators.hpp"
#include "cudalab/heap.cuh"

namespace cudalab::bench::heap {

using cudalab::heap::HeapOp;
using cudalab::heap::HeapStep;
using cudalab::heap::OpKind;

/// Nodes (5.1) and queries (5.2): 2^16 and 2^20 (the latter 256 MiB of nodes, or of tops).
inline const std::initializer_list<std::int64_t> kNodeSizes = {1 << 16, 1 << 20};

/// Entries per heap and heaps of 5.3: n pushes then n pops on each heap.
inline const std::vector<std::pair<std::int64_t, std::int64_t>> kHeapShapes = {{2048, 1024}, {2048, 16384}};

/// The capacity in nodes that n entries need.
inline std::size_t capacity_for(std::size_t n) { return (n + cudalab::heap::node_size - 1) / cudalab::heap::node_size; }

/// Keys of the scripts of 5.3: integers uniform in [0, kKeyRange), as floats
/// (exact), so equal keys occur and the value decides their order.
inline constexpr std::uint64_t kKeyRange = 1000000;

namespace detail {
/// 64 random bits for element `i` of the stream `seed` (SplitMix64, as
/// cudalab::gen::bits, callable on the device).
__host__ __device__ inline std::uint64_t mix(std::uint64_t seed, std::uint64_t i) {
  return mix64(seed ^ (i * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull));
}

// Heap h's script at ops[2 n h, 2 n (h + 1)): n pushes of (key, j), keys
// from (seed, n h + j), then n pops.
template <class Op>
__global__ void fill_scripts_kernel(Op* ops, std::size_t n, std::size_t heaps, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n * heaps;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t h = i / n, j = i % n;
    Op* s = ops + 2 * n * h;
    s[j] = Op{OpKind::push, static_cast<float>(mix(seed, i) % kKeyRange), static_cast<int>(j)};
    s[n + j] = Op{OpKind::pop, 0.0f, 0};
  }
}

// One thread per heap: its steps against what the script (n pushes of the
// values 0 .. n - 1, then n pops) must give. Pushes: no entry out, the top
// is the smallest entry pushed so far, size j + 1. Pops: an entry that was
// pushed (its value names the push, whose key it must carry), each strictly
// after the one before by entry_less(), so the n pops are the n pushed
// entries in order; the top after a pop is the next pop's entry (empty after
// the last), size n - 1 - j. No flags anywhere. A wrong heap counts in
// wrong[0]; wrong[1] is the first such heap.
template <class Op, class Step>
__global__ void check_steps_kernel(const Op* ops, const Step* steps, std::size_t n, std::size_t heaps,
                                   unsigned long long* wrong) {
  using cudalab::heap::entry_less;
  using cudalab::heap::kEmptyKey;
  using cudalab::heap::kEmptyValue;
  for (std::size_t h = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; h < heaps;
       h += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const Op* o = ops + 2 * n * h;
    const Step* s = steps + 2 * n * h;
    bool ok = true;
    float top_key = kEmptyKey;
    int top_value = kEmptyValue;
    for (std::size_t j = 0; j < n && ok; ++j) {
      if (j == 0 || entry_less(o[j].key, o[j].value, top_key, top_value)) {
        top_key = o[j].key;
        top_value = o[j].value;
      }
      const Step st = s[j];
      ok = st.key == kEmptyKey && st.value == kEmptyValue && st.top_key == top_key && st.top_value == top_value &&
           st.size == static_cast<int>(j + 1) && st.flags == 0;
    }
    for (std::size_t j = 0; j < n && ok; ++j) {
      const Step st = s[n + j];
      const bool pushed = st.value >= 0 && static_cast<std::size_t>(st.value) < n &&
                          st.key == o[static_cast<std::size_t>(st.value)].key;
      const bool after = j == 0 || entry_less(s[n + j - 1].key, s[n + j - 1].value, st.key, st.value);
      const bool top = j + 1 < n ? st.top_key == s[n + j + 1].key && st.top_value == s[n + j + 1].value
                                 : st.top_key == kEmptyKey && st.top_value == kEmptyValue;
      ok = pushed && after && top && st.size == static_cast<int>(n - 1 - j) && st.flags == 0;
    }
    if (!ok) {
      atomicAdd(&wrong[0], 1ull);
      atomicMin(&wrong[1], static_cast<unsigned long long>(h));
    }
  }
}
}  // namespace detail

/// The scripts of 5.3's benchmark, one buffer per shape, allocated once and
/// written by fresh_scripts() before every call: heap h pushes n entries
/// with keys uniform in [0, kKeyRange) and values 0 .. n - 1, then pops n
/// times. Layout: heap h's 2n operations at [2n h, 2n (h + 1)).
inline DeviceBuffer<HeapOp>& scripts(std::size_t n, std::size_t heaps) {
  static std::map<std::pair<std::size_t, std::size_t>, DeviceBuffer<HeapOp>> cache;
  return cache.try_emplace({n, heaps}, 2 * n * heaps).first->second;
}

/// @brief "" when `steps` are what the scripts of scripts() (as they are in
///        `ops` now) must give, step for step (see HeapStep), else how many
///        heaps differ and the first. Work O(n · heaps), on the device.
inline std::string check_steps(const HeapOp* ops, const HeapStep* steps, std::size_t n, std::size_t heaps) {
  DeviceBuffer<unsigned long long> wrong(std::vector<unsigned long long>{0, ~0ull});
  constexpr int kBlock = 128;
  const auto blocks = static_cast<unsigned>(std::max<std::size_t>(1, (heaps + kBlock - 1) / kBlock));
  detail::check_steps_kernel<<<blocks, kBlock>>>(ops, steps, n, heaps, wrong.data());
  CUDALAB_CHECK_LAUNCH();
  const std::vector<unsigned long long> w = wrong.download();
  if (w[0] == 0) return "";
  return std::to_string(w[0]) + " of " + std::to_string(heaps) +
         " heaps' steps are not what their script gives (first: heap " + std::to_string(w[1]) + ")";
}

/// @brief New push keys in `ops` (scripts(n, heaps)) before every call, from
///        a new seed, and the check of the last call's `steps` (check_steps).
inline Fresh fresh_scripts(DeviceBuffer<HeapOp>& ops, const DeviceBuffer<HeapStep>& steps, std::size_t n,
                           std::size_t heaps) {
  Fresh f;
  f.refresh = [&ops, n, heaps](cudaStream_t s) {
    detail::fill_scripts_kernel<<<4 * sm_count(), 256, 0, s>>>(ops.data(), n, heaps, next_seed());
    CUDALAB_CHECK_LAUNCH();
  };
  f.verify = [&ops, &steps, n, heaps] { return check_steps(ops.data(), steps.data(), n, heaps); };
  return f;
}

/// Bytes one run of a script benchmark moves at the least: each operation
/// read once, each step written once (the heaps' own traffic comes on top).
inline std::size_t script_bytes(std::size_t ops) { return ops * (sizeof(HeapOp) + sizeof(HeapStep)); }

}  // namespace cudalab::bench::heap
