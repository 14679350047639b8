// Benchmark inputs shared by exercises 5.1 to 5.3. Every exercise's bench
// program also links bench/heap_baselines_bench.cu, so the copy bandwidth
// and the per-thread binary heap are measured in the same run.
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
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

/// The scripts of 5.3's benchmark, built once per shape: heap h pushes n
/// entries with keys uniform in [0, 1e6) and values 0 .. n - 1, then pops n
/// times. Layout: heap h's 2n operations at [2n h, 2n (h + 1)).
inline const DeviceBuffer<HeapOp>& scripts(std::size_t n, std::size_t heaps) {
  static std::map<std::pair<std::size_t, std::size_t>, DeviceBuffer<HeapOp>> cache;
  auto it = cache.find({n, heaps});
  if (it == cache.end()) {
    std::vector<HeapOp> host(2 * n * heaps);
    for (std::size_t h = 0; h < heaps; ++h) {
      HeapOp* s = host.data() + 2 * n * h;
      for (std::size_t i = 0; i < n; ++i) {
        const double u = static_cast<double>(gen::bits(h + 1, i) >> 11) * 0x1.0p-53;
        s[i] = HeapOp{OpKind::push, static_cast<float>(u * 1e6), static_cast<int>(i)};
        s[n + i] = HeapOp{OpKind::pop, 0.0f, 0};
      }
    }
    it = cache.emplace(std::make_pair(n, heaps), DeviceBuffer<HeapOp>(host)).first;
  }
  return it->second;
}

/// Bytes one run of a script benchmark moves at the least: each operation
/// read once, each step written once (the heaps' own traffic comes on top).
inline std::size_t script_bytes(std::size_t ops) { return ops * (sizeof(HeapOp) + sizeof(HeapStep)); }

}  // namespace cudalab::bench::heap
