// Helpers shared by the tests of chapter 3: device storage with poisoned
// guard zones before and after it (a write out of bounds changes a guard and
// fails the test), views built on it, and multiset comparisons.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cudalab/device_buffer.cuh"
#include "cudalab/generators.hpp"
#include "cudalab/stack.cuh"
#include "cudalab/test/harness.hpp"
#include "stack_reference.hpp"

namespace cudalab::test::stack {

using cudalab::stack::DeviceQueue;
using cudalab::stack::DeviceStack;

constexpr unsigned char kPoison = 0xA5;         // every guard byte, and unwritten slots
constexpr int kPoisonInt = static_cast<int>(0xA5A5A5A5u);
constexpr std::size_t kGuard = 1024;           // guard elements on each side (4 KiB)

/// An int array of `size` elements with kGuard poisoned elements before and
/// after it, all poisoned at construction.
class GuardedArray {
 public:
  explicit GuardedArray(std::size_t size) : size_(size), buf_(size + 2 * kGuard) { buf_.fill_bytes(kPoison); }
  int* data() { return buf_.data() + kGuard; }
  std::size_t size() const { return size_; }
  /// The elements (not the guards).
  std::vector<int> download() const {
    const std::vector<int> all = buf_.download();
    return {all.begin() + static_cast<std::ptrdiff_t>(kGuard),
            all.begin() + static_cast<std::ptrdiff_t>(kGuard + size_)};
  }
  void upload(const std::vector<int>& host) {
    if (!host.empty())
      CUDALAB_CHECK(cudaMemcpy(data(), host.data(), host.size() * sizeof(int), cudaMemcpyHostToDevice));
  }
  /// Empty when both guards are intact, else a description of the first damage.
  std::string guard_damage() const {
    const std::vector<int> all = buf_.download();
    for (std::size_t g = 0; g < kGuard; ++g) {
      const std::size_t before = kGuard - 1 - g;  // nearest the array first
      if (all[before] != kPoisonInt)
        return "element " + std::to_string(before) + " before the start was overwritten with " +
               std::to_string(all[before]) + " (index -" + std::to_string(g + 1) + ")";
      const std::size_t after = kGuard + size_ + g;
      if (all[after] != kPoisonInt)
        return "element at index " + std::to_string(size_ + g) + " (capacity " + std::to_string(size_) +
               ") was overwritten with " + std::to_string(all[after]);
    }
    return {};
  }

 private:
  std::size_t size_;
  DeviceBuffer<int> buf_;
};

/// What a failed check of the error word says: with flags set before the call
/// (flags_before != 0), that `call` (push, pop) must add its `bit` (kOverflow,
/// kUnderflow) to them and keep them; else `otherwise`.
inline std::string flags_advice(unsigned flags_before, const char* bit, const char* call,
                                const std::string& otherwise) {
  if (flags_before == 0) return otherwise;
  return "the error bits set before the call (" + std::to_string(flags_before) +
         ") must stay set until clear(): set " + bit +
         " with an atomic OR (fetch_or, atomicOr), never store the whole word, and never clear it in a " +
         call;
}

/// A stack of `capacity` slots in a GuardedArray, with a zero counter and flags.
class GuardedStack {
 public:
  explicit GuardedStack(std::size_t capacity) : slots_(capacity), count_(1), errors_(1) {
    set_counter(0);
    CUDALAB_CHECK(cudaMemset(errors_.data(), 0, sizeof(unsigned)));
  }
  DeviceStack<int> view() { return {slots_.data(), slots_.size(), count_.data(), errors_.data()}; }
  GuardedArray& slots() { return slots_; }
  void set_counter(long long c) {
    CUDALAB_CHECK(cudaMemcpy(count_.data(), &c, sizeof c, cudaMemcpyHostToDevice));
  }
  long long counter() { return view().counter(); }
  unsigned flags() { return view().flags(); }
  /// Sets the error word, as an earlier call that failed would have left it.
  void set_flags(unsigned f) { CUDALAB_CHECK(cudaMemcpy(errors_.data(), &f, sizeof f, cudaMemcpyHostToDevice)); }
  /// Empty when the guards around the slots are intact.
  std::string guard_ok_or_message() { return slots_.guard_damage(); }

 private:
  GuardedArray slots_;
  DeviceBuffer<long long> count_;
  DeviceBuffer<unsigned> errors_;
};

/// A ring queue of `capacity` slots in a GuardedArray.
class GuardedQueue {
 public:
  explicit GuardedQueue(std::size_t capacity) : slots_(capacity), counters_(2), errors_(1) { reset_at(0); }
  DeviceQueue<int> view() {
    return {slots_.data(), slots_.size(), counters_.data(), counters_.data() + 1, errors_.data()};
  }
  GuardedArray& slots() { return slots_; }
  std::pair<unsigned long long, unsigned long long> counters() { return view().counters(); }
  unsigned flags() { return view().flags(); }
  /// Sets the error word, as an earlier call that failed would have left it.
  void set_flags(unsigned f) { CUDALAB_CHECK(cudaMemcpy(errors_.data(), &f, sizeof f, cudaMemcpyHostToDevice)); }
  void reset_at(unsigned long long position) {
    const unsigned long long both[2] = {position, position};
    CUDALAB_CHECK(cudaMemcpy(counters_.data(), both, sizeof both, cudaMemcpyHostToDevice));
    CUDALAB_CHECK(cudaMemset(errors_.data(), 0, sizeof(unsigned)));
  }

 private:
  GuardedArray slots_;
  DeviceBuffer<unsigned long long> counters_;
  DeviceBuffer<unsigned> errors_;
};

/// The edge sizes of docs/guides/contributing.md ("Tests") plus warp and block boundaries.
inline const std::vector<std::size_t> kSizes = {0,    1,    2,     31,    32,      33,      63,
                                               64,   255,  256,   257,   1023,    1024,    1025,
                                               4097, 65537, 1000003, (1u << 20) + 7, (1u << 24) + 3};

inline std::string size_name(const ::testing::TestParamInfo<std::size_t>& info) {
  return "n" + std::to_string(info.param);
}

/// Device copy of a host vector (null data when empty).
template <class T>
DeviceBuffer<T> to_device(const std::vector<T>& host) {
  return DeviceBuffer<T>(host);
}

/// Empty when `actual` and `expected` are equal as multisets, else the first
/// value (in sorted order) whose count differs, with both counts.
inline std::string multiset_difference(std::vector<int> expected, std::vector<int> actual) {
  std::sort(expected.begin(), expected.end());
  std::sort(actual.begin(), actual.end());
  if (expected == actual) return {};
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < expected.size() || j < actual.size()) {
    if (j == actual.size() || (i < expected.size() && expected[i] < actual[j])) {
      const int v = expected[i];
      const auto want = std::count(expected.begin(), expected.end(), v);
      const auto got = std::count(actual.begin(), actual.end(), v);
      return "value " + std::to_string(v) + " expected " + std::to_string(want) + " time(s), found " +
             std::to_string(got) + " (" + std::to_string(expected.size()) + " expected items, " +
             std::to_string(actual.size()) + " found)";
    }
    if (i == expected.size() || actual[j] < expected[i]) {
      const int v = actual[j];
      const auto want = std::count(expected.begin(), expected.end(), v);
      const auto got = std::count(actual.begin(), actual.end(), v);
      return "value " + std::to_string(v) + " found " + std::to_string(got) + " time(s), expected " +
             std::to_string(want) + (v == kPoisonInt ? " (0xA5A5A5A5: a slot that was never written)" : "") +
             " (" + std::to_string(expected.size()) + " expected items, " + std::to_string(actual.size()) +
             " found)";
    }
    ++i;
    ++j;
  }
  return {};
}

/// Empty when `sub` is a sub-multiset of `whole`, else the first value found too often.
inline std::string not_a_submultiset(std::vector<int> whole, std::vector<int> sub) {
  std::sort(whole.begin(), whole.end());
  std::sort(sub.begin(), sub.end());
  if (std::includes(whole.begin(), whole.end(), sub.begin(), sub.end())) return {};
  for (std::size_t j = 0; j < sub.size();) {
    std::size_t k = j;
    while (k < sub.size() && sub[k] == sub[j]) ++k;
    const auto have = std::count(whole.begin(), whole.end(), sub[j]);
    if (static_cast<std::ptrdiff_t>(k - j) > have)
      return "value " + std::to_string(sub[j]) + " stored " + std::to_string(k - j) + " time(s) but pushed " +
             std::to_string(have) + " time(s)" +
             (sub[j] == kPoisonInt ? " (0xA5A5A5A5: a slot inside the size that was never written)" : "");
    j = k;
  }
  return "not a sub-multiset";
}

/// Flags for n threads: 1 with probability per_1024 / 1024.
inline std::vector<std::uint8_t> random_flags(std::size_t n, std::uint64_t seed, unsigned per_1024) {
  const auto r = gen::uniform_int<unsigned>(n, seed ^ 0xF1A65ull, 0, 1023);
  std::vector<std::uint8_t> f(n);
  for (std::size_t i = 0; i < n; ++i) f[i] = r[i] < per_1024 ? 1 : 0;
  return f;
}

/// Flags for n threads: only lane `lane` of each warp pushes.
inline std::vector<std::uint8_t> lane_flags(std::size_t n, unsigned lane) {
  std::vector<std::uint8_t> f(n);
  for (std::size_t i = 0; i < n; ++i) f[i] = (i % 32) == lane ? 1 : 0;
  return f;
}

}  // namespace cudalab::test::stack
