// Benchmark registration shared by exercises 3.1 to 3.5. Every exercise's
// bench program also links bench/stack_baselines_bench.cu, so the device's
// atomic throughput, the copy bandwidth and the CUB expansion are measured in
// the same run. Every benchmark writes new inputs before each timed call
// (untimed) and checks the last call's output (cudalab::bench::Fresh).
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cudalab/bench.cuh"
#include "cudalab/stack.cuh"
#include "stack_reference.hpp"

namespace cudalab::bench::stack {

/// The chapter's standard sizes: 2^20 and 2^24 threads.
inline const std::initializer_list<std::int64_t> kSizes = {1 << 20, 1 << 24};
/// Pushing density: every lane (1) or lane 0 of each warp (32).
inline const std::initializer_list<std::int64_t> kStrides = {1, 32};

namespace detail {
/// A 64-bit hash of one int (SplitMix64): summed over an array, a fingerprint
/// of the array's multiset of values.
__host__ __device__ inline unsigned long long int_hash(int v) {
  return mix64(static_cast<std::uint32_t>(v) * 0x9E3779B97F4A7C15ull + 1);
}
}  // namespace detail

/// @brief The multiset fingerprint of a[0, n) (int32, device memory): the sum
///        of int_hash over it, mod 2^64. Work O(n), on the device
///        (thrust::transform_reduce, on the default stream, waited for).
///        Defined in bench/stack_checks.cu, compiled once per group (its
///        BASELINES).
unsigned long long fingerprint(const int* a, std::size_t n);

/// @brief The multiset fingerprint of the items that n threads push when
///        every stride-th one does (items[i] for i = 0, stride, 2 · stride, …
///        < n; int32, device memory): the sum of their int_hash, mod 2^64.
///        Work O(n), on the device (thrust::transform_reduce, on the default
///        stream, waited for). Defined in bench/stack_checks.cu, compiled once
///        per group (its BASELINES).
unsigned long long pushed_fingerprint(const int* items, std::size_t n, std::size_t stride);

/// Items: one device buffer of n ints per size, new values before every call (refill_items).
inline DeviceBuffer<int>& items(std::size_t n) { return fresh_buffer<int>(n); }

/// Enqueues new items, uniform in [0, 2^30], in data[0, n), from a new seed.
inline void refill_items(int* data, std::size_t n, cudaStream_t stream) {
  if (n == 0) return;
  cudalab::bench::detail::fill_uniform_int_kernel<int>
      <<<4 * sm_count(), 256, 0, stream>>>(data, n, next_seed(), 0, 1 << 30);
  CUDALAB_CHECK_LAUNCH();
}

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

/// @brief "" when the stack holds exactly the items that n threads pushed,
///        every stride-th one (counter = pushes, no error flag, the multiset
///        of data[0, pushes) = that of the pushed items), else what is wrong.
///        Work O(n), on the device.
inline std::string check_pushed(const int* items, std::size_t n, std::size_t stride,
                                const cudalab::stack::DeviceStack<int>& st) {
  const std::size_t pushes = (n + stride - 1) / stride;
  const unsigned flags = st.flags();
  if (flags != 0) return "error flags " + std::to_string(flags) + " set";
  const long long count = st.counter();
  if (count != static_cast<long long>(pushes)) {
    return "counter " + std::to_string(count) + ", expected " + std::to_string(pushes);
  }
  const unsigned long long want = pushed_fingerprint(items, n, stride);
  if (fingerprint(st.data, pushes) != want) return "the stack does not hold the pushed items";
  return "";
}

/// @brief "" when n pops from a full stack of n moved out exactly its items
///        (counter 0, no error flag, the multiset of out[0, n) = that of the
///        slots, which pops do not modify), else what is wrong. Work O(n), on the device.
inline std::string check_popped(const cudalab::stack::DeviceStack<int>& st, std::size_t n, const int* out) {
  const unsigned flags = st.flags();
  if (flags != 0) return "error flags " + std::to_string(flags) + " set";
  const long long count = st.counter();
  if (count != 0) return "counter " + std::to_string(count) + ", expected 0";
  if (fingerprint(out, n) != fingerprint(st.data, n)) return "the outputs are not the stack's items";
  return "";
}

/// @brief "" when n items went through the queue: head = tail = `end`, no
///        error flag, the multiset of out[0, n) = that of in[0, n); else what
///        is wrong. Work O(n), on the device.
inline std::string check_dequeued(const cudalab::stack::DeviceQueue<int>& q, const int* in, std::size_t n,
                                  unsigned long long end, const int* out) {
  const unsigned flags = q.flags();
  if (flags != 0) return "error flags " + std::to_string(flags) + " set";
  const auto [head, tail] = q.counters();
  if (head != end || tail != end) {
    return "head " + std::to_string(head) + ", tail " + std::to_string(tail) + ", expected " + std::to_string(end);
  }
  if (fingerprint(out, n) != fingerprint(in, n)) return "the outputs are not the enqueued items";
  return "";
}

using PushFn = void (*)(cudalab::stack::DeviceStack<int>, const int*, const std::uint8_t*, std::size_t,
                        cudaStream_t);

/// Registers "<name>/int32/<n>/<stride>": n threads, every stride-th pushes
/// into a cleared stack of capacity n. Items = pushes; bytes = items read,
/// flags read, items written; the counter "n" = threads (the size in the
/// name). The clear (two small memsets) is timed too. New items before every
/// call; the last call's stack is checked (check_pushed).
inline bool register_push(const std::string& name, PushFn fn) {
  auto* b = register_device_benchmark(name + "/int32", [fn](benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const auto stride = static_cast<std::size_t>(state.range(1));
    DeviceBuffer<int>& in = items(n);
    const std::uint8_t* flags = stride_flags(n, stride);
    static std::map<std::size_t, cudalab::stack::Stack<int>> stacks;
    cudalab::stack::Stack<int>& st = stacks.try_emplace(n, n).first->second;
    const std::size_t pushes = (n + stride - 1) / stride;
    Fresh fresh;
    fresh.refresh = [&](cudaStream_t s) { refill_items(in.data(), n, s); };
    fresh.verify = [&] { return check_pushed(in.data(), n, stride, st.view()); };
    time_runs(
        state,
        [&](cudaStream_t s) {
          st.clear(s);
          fn(st.view(), in.data(), flags, n, s);
        },
        n * sizeof(int) + (flags ? n : 0) + pushes * sizeof(int), pushes, fresh);
    state.counters["n"] = static_cast<double>(n);  // the size in the name: threads, not pushes
  });
  for (auto n : kSizes)
    for (auto stride : kStrides) b->Args({n, stride});
  return true;
}

/// The depth and density of the trees that the expansion benchmarks grow,
/// by size label; the seed is new for every call (new_expand_case). With
/// seed 1 they have 340674 nodes in 21 levels and 3551806 nodes in 25 levels.
inline cudalab::stack::TreeRule expand_rule(std::size_t nodes) {
  return nodes < 1000000 ? cudalab::stack::TreeRule{1, 20, 920} : cudalab::stack::TreeRule{1, 24, 920};
}
/// The nodes every call of an expansion benchmark visits.
inline const std::initializer_list<std::int64_t> kTreeSizes = {340674, 3551806};

/// The childless extra roots of an expansion call number at most nodes / kMaxPadDivisor (about 1.6 % on average).
inline constexpr std::size_t kMaxPadDivisor = 32;
/// new_expand_case grows the levels above this depth on the host, the rest on the device.
inline constexpr unsigned kHostDepth = 14;

/// One call's input of an expansion benchmark and what its output must be.
struct ExpandCase {
  cudalab::stack::TreeRule rule{};            ///< expand_rule(nodes) with a new seed
  std::size_t n_roots = 0;                    ///< node 1, then n_roots − 1 childless roots
  std::vector<unsigned long long> counts;     ///< the nodes of each level
  std::vector<unsigned long long> hashes;     ///< the fingerprint (sum of int_hash) of each level
};

namespace detail {
/// Thread i walks the subtree of frontier[i] depth first and adds the number
/// and the int_hash of its nodes at each depth d to counts[d] and hashes[d].
__global__ inline void subtree_levels_kernel(const int* __restrict__ frontier, std::size_t n,
                                             cudalab::stack::TreeRule rule, unsigned long long* counts,
                                             unsigned long long* hashes) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  constexpr unsigned kDepths = cudalab::stack::max_tree_depth + 1;
  unsigned long long count[kDepths] = {}, hash[kDepths] = {};
  int todo[2 * kDepths];
  int top = 0;
  todo[top++] = frontier[i];
  while (top > 0) {
    const int v = todo[--top];
    const unsigned d = cudalab::stack::node_depth(v);
    ++count[d];
    hash[d] += int_hash(v);
    if (cudalab::stack::has_child(rule, v, 0)) todo[top++] = 2 * v;
    if (cudalab::stack::has_child(rule, v, 1)) todo[top++] = 2 * v + 1;
  }
  for (unsigned d = 0; d < kDepths; ++d) {
    if (count[d] == 0) continue;
    atomicAdd(counts + d, count[d]);
    atomicAdd(hashes + d, hash[d]);
  }
}
}  // namespace detail

/// @brief The roots buffer of the expansion benchmark of `nodes`: node 1,
///        then room for nodes / kMaxPadDivisor extra roots.
inline DeviceBuffer<int>& expand_roots(std::size_t nodes) {
  static std::map<std::size_t, DeviceBuffer<int>> roots;
  auto it = roots.find(nodes);
  if (it == roots.end()) {
    std::vector<int> host(1 + nodes / kMaxPadDivisor, 0);
    host[0] = 1;
    it = roots.emplace(nodes, DeviceBuffer<int>(host)).first;
  }
  return it->second;
}

/// @brief A new input of the expansion benchmark of `nodes`: the tree of
///        expand_rule(nodes) with a new seed from root 1 (drawn again until
///        it has between nodes − nodes / kMaxPadDivisor and nodes nodes),
///        plus as many childless roots (random ids at depth ≥ max_depth,
///        written to roots[1, n_roots) on `stream`) as make exactly `nodes`
///        nodes, so every call's levels are new; with the counts and
///        fingerprints of its levels.
///
/// The levels above kHostDepth are grown on the host, where a seed whose
/// size (predicted from the level sizes) cannot fit is dropped early; the
/// rest is counted on the device. Synchronizes `stream`. Work O(nodes) on
/// the device, about 1 ms on the host.
/// @throws std::runtime_error when no seed fits in 100000 draws.
inline ExpandCase new_expand_case(std::size_t nodes, DeviceBuffer<int>& roots, cudaStream_t stream) {
  const cudalab::stack::TreeRule base = expand_rule(nodes);
  const unsigned host_depth = std::min(base.max_depth, kHostDepth);
  // below[d]: the expected number of nodes of the subtree of a node at depth d.
  std::vector<double> below(base.max_depth + 1, 1.0);
  for (unsigned d = base.max_depth; d-- > 0;) below[d] = 1 + 2.0 * base.keep_per_1024 / 1024 * below[d + 1];
  const std::size_t max_pad = nodes / kMaxPadDivisor;
  const double most = static_cast<double>(nodes), least = static_cast<double>(nodes - max_pad);
  static DeviceBuffer<unsigned long long> sums(2 * (cudalab::stack::max_tree_depth + 1));
  static DeviceBuffer<int> frontier;
  for (int attempt = 0; attempt < 100000; ++attempt) {
    ExpandCase c;
    c.rule = {next_seed(), base.max_depth, base.keep_per_1024};
    std::vector<int> level{1}, next;
    std::size_t above = 0;  // nodes above the current level
    bool fits = true;
    for (unsigned d = 0;; ++d) {
      // The tree's size predicted from this level, and (roughly) its standard deviation.
      const double z = static_cast<double>(level.size());
      const double guess = static_cast<double>(above) + z * below[d], spread = 0.4 * below[d] * std::sqrt(z);
      if (d == host_depth) {
        fits = guess - spread >= least && guess + spread <= most;
        break;
      }
      if (guess - 3 * spread > most || guess + 3 * spread < least) {
        fits = false;
        break;
      }
      unsigned long long hash = 0;
      next.clear();
      for (const int v : level) {
        hash += detail::int_hash(v);
        if (cudalab::stack::has_child(c.rule, v, 0)) next.push_back(2 * v);
        if (cudalab::stack::has_child(c.rule, v, 1)) next.push_back(2 * v + 1);
      }
      c.counts.push_back(level.size());
      c.hashes.push_back(hash);
      above += level.size();
      level.swap(next);
    }
    if (!fits) continue;
    // The levels from host_depth down, on the device.
    if (frontier.size() < level.size()) frontier = DeviceBuffer<int>(level.size());
    CUDALAB_CHECK(cudaMemcpyAsync(frontier.data(), level.data(), level.size() * sizeof(int), cudaMemcpyHostToDevice,
                                  stream));
    CUDALAB_CHECK(cudaMemsetAsync(sums.data(), 0, sums.bytes(), stream));
    constexpr unsigned kDepths = cudalab::stack::max_tree_depth + 1;
    detail::subtree_levels_kernel<<<static_cast<unsigned>((level.size() + 127) / 128), 128, 0, stream>>>(
        frontier.data(), level.size(), c.rule, sums.data(), sums.data() + kDepths);
    CUDALAB_CHECK_LAUNCH();
    std::vector<unsigned long long> host(sums.size());
    CUDALAB_CHECK(cudaMemcpyAsync(host.data(), sums.data(), sums.bytes(), cudaMemcpyDeviceToHost, stream));
    CUDALAB_CHECK(cudaStreamSynchronize(stream));
    std::size_t total = above;
    for (unsigned d = host_depth; d < kDepths && host[d] != 0; ++d) {
      c.counts.push_back(host[d]);
      c.hashes.push_back(host[kDepths + d]);
      total += host[d];
    }
    if (total > nodes || nodes - total > max_pad) continue;
    // Level 0: node 1 and the childless roots.
    const std::size_t pads = nodes - total;
    c.n_roots = 1 + pads;
    c.counts[0] += pads;
    if (pads > 0) {
      cudalab::bench::detail::fill_uniform_int_kernel<int><<<4 * sm_count(), 256, 0, stream>>>(
          roots.data() + 1, pads, next_seed(), 1 << base.max_depth, INT_MAX);
      CUDALAB_CHECK_LAUNCH();
      CUDALAB_CHECK(cudaStreamSynchronize(stream));
      c.hashes[0] += fingerprint(roots.data() + 1, pads);
    }
    return c;
  }
  throw std::runtime_error("expansion benchmark: no tree of " + std::to_string(nodes) + " nodes found");
}

/// @brief "" when `offsets` and visited[0, nodes) hold the levels of `c`
///        (each level's count, and its nodes as a multiset by fingerprint),
///        else what is wrong. Work O(nodes), on the device.
inline std::string check_expansion(const ExpandCase& c, const std::vector<std::size_t>& offsets, const int* visited) {
  if (offsets.size() != c.counts.size() + 1 || offsets[0] != 0) {
    return std::to_string(offsets.size()) + " offsets (first " +
           (offsets.empty() ? std::string("none") : std::to_string(offsets[0])) + "), expected " +
           std::to_string(c.counts.size() + 1) + " from 0";
  }
  for (std::size_t l = 0; l < c.counts.size(); ++l) {
    if (offsets[l + 1] - offsets[l] != c.counts[l]) {
      return "level " + std::to_string(l) + " holds " + std::to_string(offsets[l + 1] - offsets[l]) +
             " nodes, expected " + std::to_string(c.counts[l]);
    }
    if (fingerprint(visited + offsets[l], c.counts[l]) != c.hashes[l]) {
      return "level " + std::to_string(l) + " does not hold the nodes of the tree";
    }
  }
  return "";
}

using ExpandFn = std::vector<std::size_t> (*)(const int*, std::size_t, cudalab::stack::TreeRule, int*,
                                              std::size_t, cudaStream_t);

/// Registers "<name>/int32/<nodes>": expand a tree of expand_rule(nodes)'s
/// depth and density into a visited buffer of `nodes`. Before every call
/// (untimed) a new seed and new childless extra roots make a new tree of
/// exactly `nodes` nodes (new_expand_case); the last call's levels are
/// checked (check_expansion). Items = nodes visited; bytes = each node
/// written to its list and to `visited`, read once.
inline bool register_expand(const std::string& name, ExpandFn fn) {
  auto* b = register_device_benchmark(name + "/int32", [fn](benchmark::State& state) {
    const auto nodes = static_cast<std::size_t>(state.range(0));
    DeviceBuffer<int>& roots = expand_roots(nodes);
    static std::map<std::size_t, DeviceBuffer<int>> visited;
    DeviceBuffer<int>& out = visited.try_emplace(nodes, nodes).first->second;
    ExpandCase current;
    std::vector<std::size_t> offsets;
    Fresh fresh;
    fresh.refresh = [&](cudaStream_t s) { current = new_expand_case(nodes, roots, s); };
    fresh.verify = [&] { return check_expansion(current, offsets, out.data()); };
    time_runs(
        state,
        [&](cudaStream_t s) { offsets = fn(roots.data(), current.n_roots, current.rule, out.data(), nodes, s); },
        3 * nodes * sizeof(int), nodes, fresh);
  });
  for (auto n : kTreeSizes) b->Arg(n);
  return true;
}

}  // namespace cudalab::bench::stack
