// Benchmark registration shared by exercises 3.1 to 3.5. Every exercise's
// bench program also links bench/stack_baselines_bench.cu, so the device's
// atomic throughput, the copy bandwidth and the CUB expansion are measured in
// the same run.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdint>
#include <initializer_list>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "cudalab/bench.cuh"
#include "cudalab/stack.cuh"
#include "stack_reference.hpp"

namespace cudalab::bench::stack {

/// The chapter's standard sizes: 2^20 and 2^24 threads.
inline const std::initializer_list<std::int64_t> kSizes = {1 << 20, 1 << 24};
/// Pushing density: every lane (1) or lane 0 of each warp (32).
inline const std::initializer_list<std::int64_t> kStrides = {1, 32};

/// Items (uniform ints, generated on the device once).
inline const DeviceBuffer<int>& items(std::size_t n) { return cached_uniform_ints<int>(n, 2025, 0, 1 << 30); }

/// Flags with 1 on every `stride`-th thread (null for stride 1: every thread).
inline const std::uint8_t* stride_flags(std::size_t n, std::size_t stride) {
  if (stride == 1) return nullptr;
  static std::map<std::pair<std::size_t, std::size_t>, DeviceBuffer<std::uint8_t>> cache;
  auto it = cache.find({n, stride});
  if (it == cache.end()) {
    std::vector<std::uint8_t> host(n);
    for (std::size_t i = 0; i < n; ++i) host[i] = i % stride == 0 ? 1 : 0;
    it = cache.emplace(std::make_pair(n, stride), DeviceBuffer<std::uint8_t>(host)).first;
  }
  return it->second.data();
}

using PushFn = void (*)(cudalab::stack::DeviceStack<int>, const int*, const std::uint8_t*, std::size_t,
                        cudaStream_t);

/// Registers "<name>/int32/<n>/<stride>": n threads, every stride-th pushes
/// into a cleared stack of capacity n. Items = pushes; bytes = items read,
/// flags read, items written; the counter "n" = threads (the size in the
/// name). The clear (two small memsets) is timed too.
inline bool register_push(const std::string& name, PushFn fn) {
  auto* b = benchmark::RegisterBenchmark((name + "/int32").c_str(), [fn](benchmark::State& state) {
    if (!require_device(state)) return;
    const auto n = static_cast<std::size_t>(state.range(0));
    const auto stride = static_cast<std::size_t>(state.range(1));
    const DeviceBuffer<int>& in = items(n);
    const std::uint8_t* flags = stride_flags(n, stride);
    static std::map<std::size_t, cudalab::stack::Stack<int>> stacks;
    cudalab::stack::Stack<int>& st = stacks.try_emplace(n, n).first->second;
    const std::size_t pushes = (n + stride - 1) / stride;
    time_runs(
        state,
        [&](cudaStream_t s) {
          st.clear(s);
          fn(st.view(), in.data(), flags, n, s);
        },
        n * sizeof(int) + (flags ? n : 0) + pushes * sizeof(int), pushes);
    state.counters["n"] = static_cast<double>(n);  // the size in the name: threads, not pushes
  });
  for (auto n : kSizes)
    for (auto stride : kStrides) b->Args({n, stride});
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
  return true;
}

/// The tree that the expansion benchmarks grow from root 1, by size
/// label: 340674 nodes in 21 levels and 3551806 nodes in 25 levels.
inline cudalab::stack::TreeRule expand_rule(std::size_t nodes) {
  return nodes < 1000000 ? cudalab::stack::TreeRule{1, 20, 920} : cudalab::stack::TreeRule{1, 24, 920};
}
/// The sizes of those trees (checked against the reference at start-up).
inline const std::initializer_list<std::int64_t> kTreeSizes = {340674, 3551806};

/// The number of nodes of the tree of `rule` from root 1 (CPU reference).
inline std::size_t tree_size(const cudalab::stack::TreeRule& rule) {
  std::size_t total = 0;
  for (const auto& level : cudalab::reference::expand_levels({1}, rule)) total += level.size();
  return total;
}

using ExpandFn = std::vector<std::size_t> (*)(const int*, std::size_t, cudalab::stack::TreeRule, int*,
                                              std::size_t, cudaStream_t);

/// Registers "<name>/int32/<nodes>": expand the tree of expand_rule(nodes)
/// from root 1 into a visited buffer of `nodes`. Items = nodes visited;
/// bytes = each node written to its list and to `visited`, read once.
inline bool register_expand(const std::string& name, ExpandFn fn) {
  auto* b = benchmark::RegisterBenchmark((name + "/int32").c_str(), [fn](benchmark::State& state) {
    if (!require_device(state)) return;
    const auto nodes = static_cast<std::size_t>(state.range(0));
    const cudalab::stack::TreeRule rule = expand_rule(nodes);
    if (tree_size(rule) != nodes) {
      state.SkipWithError("the benchmark tree's size differs from its label");
      return;
    }
    static const DeviceBuffer<int> root(std::vector<int>{1});
    static std::map<std::size_t, DeviceBuffer<int>> visited;
    DeviceBuffer<int>& out = visited.try_emplace(nodes, nodes).first->second;
    time_runs(
        state,
        [&](cudaStream_t s) {
          const auto offsets = fn(root.data(), 1, rule, out.data(), nodes, s);
          if (offsets.back() != nodes) throw std::runtime_error("expansion benchmark: wrong node count");
        },
        3 * nodes * sizeof(int), nodes);
  });
  for (auto n : kTreeSizes) b->Arg(n);
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
  return true;
}

}  // namespace cudalab::bench::stack
