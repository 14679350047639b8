// Helpers shared by the tests of chapter 5: poisoned device buffers, random
// warp-sorted nodes and random heap scripts, all from (seed, index) alone.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "cudalab/device_buffer.cuh"
#include "cudalab/generators.hpp"
#include "cudalab/heap.cuh"
#include "cudalab/test/harness.hpp"
#include "heap_reference.hpp"

namespace cudalab::test::heap {

using cudalab::heap::Entry;
using cudalab::heap::HeapOp;
using cudalab::heap::HeapStep;
using cudalab::heap::OpKind;

constexpr unsigned char kPoison = 0xA5;  // every output byte before a call
constexpr Entry kSentinel{cudalab::heap::kEmptyKey, cudalab::heap::kSentinelValue};

/// A device copy of `host` (no allocation when empty).
template <class T>
DeviceBuffer<T> to_device(const std::vector<T>& host) {
  return DeviceBuffer<T>(host);
}

/// A device buffer of n elements, every byte kPoison.
template <class T>
DeviceBuffer<T> poisoned(std::size_t n) {
  DeviceBuffer<T> b(n);
  b.fill_bytes(kPoison);
  return b;
}

/// The random stream of one test: r(i) gives 64 bits for index i.
struct Random {
  std::uint64_t seed;
  std::uint64_t operator()(std::uint64_t i) const { return cudalab::gen::bits(seed, i); }
  /// An integer in [0, n).
  std::uint64_t below(std::uint64_t i, std::uint64_t n) const {
    return static_cast<std::uint64_t>((static_cast<unsigned __int128>((*this)(i)) * n) >> 64);
  }
};

/// "(key, value)" for messages.
inline std::string show(float key, int value) {
  std::ostringstream os;
  os.precision(9);
  os << "(" << key << ", " << value << ")";
  return os.str();
}
inline std::string show(const Entry& e) { return show(e.key, e.value); }

inline bool same(const Entry& a, const Entry& b) { return a.key == b.key && a.value == b.value; }

/// A node of 32 entries, sorted, with `fill` real entries (the rest
/// sentinels). Keys from `key_span` distinct values when key_span > 0 (many
/// duplicates), else spread over [-1e6, 1e6).
inline std::vector<Entry> random_node(const Random& r, std::uint64_t base, int fill, std::uint64_t key_span) {
  std::vector<Entry> node(cudalab::heap::node_size, kSentinel);
  for (int l = 0; l < fill; ++l) {
    const auto i = base + 2 * static_cast<std::uint64_t>(l);
    const float key = key_span > 0 ? static_cast<float>(r.below(i, key_span))
                                   : static_cast<float>(static_cast<double>(r(i) >> 11) * 0x1.0p-53 * 2e6 - 1e6);
    node[static_cast<std::size_t>(l)] = Entry{key, static_cast<int>(r.below(i + 1, 1000))};
  }
  std::sort(node.begin(), node.begin() + fill);
  return node;
}

/// A push of (key, value).
inline HeapOp push_op(float key, int value) { return HeapOp{OpKind::push, key, value}; }
/// A pop.
inline HeapOp pop_op() { return HeapOp{OpKind::pop, 0.0f, 0}; }

/// Reads back n HeapSteps.
inline std::vector<HeapStep> download_steps(const DeviceBuffer<HeapStep>& d) { return d.download(); }

/// Empty when `got` equals `want` step by step, else a description of the
/// first difference (the step, the operation, both records) and `hint`.
inline std::string first_step_difference(const std::vector<HeapOp>& ops, const std::vector<HeapStep>& want,
                                         const HeapStep* got, std::size_t heap_index) {
  for (std::size_t i = 0; i < want.size(); ++i) {
    const HeapStep& w = want[i];
    const HeapStep& g = got[i];
    if (w.key == g.key && w.value == g.value && w.top_key == g.top_key && w.top_value == g.top_value &&
        w.size == g.size && w.flags == g.flags)
      continue;
    std::ostringstream os;
    os << "heap " << heap_index << ", step " << i << " ("
       << (ops[i].kind == OpKind::push ? "push " + show(ops[i].key, ops[i].value) : std::string("pop"))
       << "): expected popped " << show(w.key, w.value) << ", top " << show(w.top_key, w.top_value) << ", size "
       << w.size << ", flags " << w.flags << "; got popped " << show(g.key, g.value) << ", top "
       << show(g.top_key, g.top_value) << ", size " << g.size << ", flags " << g.flags << ". ";
    if (g.size != w.size)
      os << "The size is wrong: a push that is not refused adds one entry, a pop of a non-empty heap removes one.";
    else if (g.flags != w.flags)
      os << "Flags: kOverflow when a push finds 32 * capacity entries, kUnderflow when a pop finds none, "
            "kInvalidKey for NaN or +infinity keys (and nothing else changes then).";
    else if (!(g.key == w.key && g.value == w.value))
      os << "The pop returned the wrong entry: the root's top must be the smallest; check that every node "
            "write keeps its node sorted and the cached tops (top_keys, top_values) current.";
    else
      os << "The top after the step is wrong: the cached top of node 0 was not updated.";
    return os.str();
  }
  return {};
}

}  // namespace cudalab::test::heap
