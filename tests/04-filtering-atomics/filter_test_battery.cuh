// The test battery shared by exercises 4.1 to 4.6: every filter has the same
// contract (cudalab/filter.cuh): int32 and int64 elements, the predicates
// LessThan, IsEven and InRange, a caller-given capacity, *count = the number
// of selected elements. 4.3 keeps the input order within each tile of 2048,
// 4.6 everywhere. Each exercise's test file instantiates the battery with its
// own suite name, exercise id, order promise and function.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cudalab/device.cuh"
#include "cudalab/device_buffer.cuh"
#include "cudalab/error.cuh"
#include "cudalab/filter.cuh"
#include "cudalab/generators.hpp"
#include "cudalab/test/device_memory.cuh"
#include "cudalab/test/harness.hpp"
#include "filter_reference.hpp"

namespace cudalab::test::filter {

using cudalab::filter::InRange;
using cudalab::filter::IsEven;
using cudalab::filter::LessThan;

template <class T, class Pred>
using CopyIfFn = void (*)(const T*, std::size_t, Pred, T*, std::size_t, unsigned long long*, cudaStream_t);

constexpr unsigned char kPoison = 0xA5;  // guards, unwritten output and the count before the call
constexpr std::size_t kGuard = 1024;     // poisoned elements before and after every output (8 KiB for int64)
constexpr unsigned long long kPoisonCount = 0xA5A5A5A5A5A5A5A5ull;

/// The order an exercise promises.
enum class Order {
  kNone,         ///< any order (4.1, 4.2, 4.4, 4.5)
  kWithinTiles,  ///< input order within each tile of `tile` elements (4.3)
  kGlobal,       ///< input order (4.6): exactly std::copy_if
};

/// What the battery needs to know about an exercise: its id and the six
/// instantiations of its function.
struct Spec {
  const char* exercise;  ///< e.g. "4.1 copy_if_global_atomic"
  Order order;
  std::size_t tile;      ///< for Order::kWithinTiles
  CopyIfFn<int, LessThan<int>> lt32;
  CopyIfFn<int, IsEven> even32;
  CopyIfFn<int, InRange<int>> range32;
  CopyIfFn<long long, LessThan<long long>> lt64;
  CopyIfFn<long long, IsEven> even64;
  CopyIfFn<long long, InRange<long long>> range64;
};

/// The edge sizes of docs/guides/contributing.md ("Tests") plus the tile boundaries of every kernel
/// of the chapter: 256 (4.1's block, 4.4's and 4.5's warp chunk), 2048 (the blocks of 4.2 to 4.5,
/// 4.6's int64 tile), 4096 (4.6's int32 tile) and their multiples, a prime, 2^20 + 7 and one large
/// size.
inline const std::vector<std::size_t> kSizes = {0,     1,     31,    32,      33,              255,
                                               256,   257,   1023,  1024,    1025,            2047,
                                               2048,  2049,  4095,  4096,    4097,            6143,
                                               8191,  8192,  8193,  12289,   65537,           1000003,
                                               (1u << 20) + 7,      (1u << 24) + 3};

inline std::string size_name(const ::testing::TestParamInfo<std::size_t>& info) {
  return "n" + std::to_string(info.param);
}

/// An array of `size` elements of T with kGuard poisoned elements before
/// and after it, `offset` more elements of slack before it (to misalign it),
/// everything poisoned at construction.
template <class T>
class GuardedArray {
 public:
  explicit GuardedArray(std::size_t size, std::size_t offset = 0)
      : size_(size), offset_(offset), buf_(size + 2 * kGuard + offset) {
    buf_.fill_bytes(kPoison);
  }
  T* data() { return buf_.data() + kGuard + offset_; }
  std::size_t size() const { return size_; }
  /// The elements (not the guards).
  std::vector<T> download() const {
    const std::vector<T> all = buf_.download();
    const auto first = static_cast<std::ptrdiff_t>(kGuard + offset_);
    return {all.begin() + first, all.begin() + first + static_cast<std::ptrdiff_t>(size_)};
  }
  /// Empty when both guards are intact, else a description of the first damage.
  std::string guard_damage() const {
    const std::vector<T> all = buf_.download();
    const T poison = poison_value();
    for (std::size_t g = 0; g < kGuard + offset_; ++g) {
      const std::size_t before = kGuard + offset_ - 1 - g;  // nearest the array first
      if (!(all[before] == poison))
        return "the element " + std::to_string(g + 1) + " place(s) before out[0] was overwritten";
    }
    for (std::size_t g = 0; g < kGuard; ++g) {
      const std::size_t after = kGuard + offset_ + size_ + g;
      if (!(all[after] == poison))
        return "out[" + std::to_string(size_ + g) + "], at or past the capacity " + std::to_string(size_) +
               ", was overwritten";
    }
    return {};
  }
  /// The value of an element whose bytes are all kPoison.
  static T poison_value() {
    T v;
    std::memset(&v, kPoison, sizeof v);
    return v;
  }

 private:
  std::size_t size_;
  std::size_t offset_;
  DeviceBuffer<T> buf_;
};

/// Empty when `expected` and `actual` hold the same values the same number
/// of times, else the first value (in sorted order) whose counts differ.
template <class T>
std::string multiset_difference(std::vector<T> expected, std::vector<T> actual, bool sub = false) {
  std::sort(expected.begin(), expected.end());
  std::sort(actual.begin(), actual.end());
  if (sub ? std::includes(expected.begin(), expected.end(), actual.begin(), actual.end()) : expected == actual)
    return {};
  std::size_t i = 0, j = 0;
  const T poison = GuardedArray<T>::poison_value();
  while (i < expected.size() || j < actual.size()) {
    if (i < expected.size() && j < actual.size() && expected[i] == actual[j]) {
      ++i;
      ++j;
      continue;
    }
    if (sub && (j == actual.size() || (i < expected.size() && expected[i] < actual[j]))) {
      ++i;  // a sub-multiset may leave out expected values
      continue;
    }
    const bool missing = j == actual.size() || (i < expected.size() && expected[i] < actual[j]);
    const T v = missing ? expected[i] : actual[j];
    const auto want = std::count(expected.begin(), expected.end(), v);
    const auto got = std::count(actual.begin(), actual.end(), v);
    std::ostringstream out;
    out << "value " << v << " is selected " << want << " time(s) but found " << got << " time(s) in the output"
        << (v == poison ? " (the poison 0xA5...: an output slot below the count that was never written)" : "")
        << " (" << expected.size() << " selected, " << actual.size() << " compared)";
    return out.str();
  }
  return "the multisets differ";
}

/// Empty when `out` consists of one run per tile of `tile` inputs that has
/// selected elements, each run holding exactly that tile's selected
/// elements in input order. Needs `index_of(v)`, the input index of value v
/// (the inputs are unique).
template <class T, class IndexOf>
std::string tile_order_problem(const std::vector<T>& out, const std::vector<std::size_t>& tile_counts,
                               std::size_t tile, IndexOf index_of) {
  std::vector<char> seen(tile_counts.size(), 0);
  std::size_t current = 0, run = 0, last = 0;
  for (std::size_t j = 0; j < out.size(); ++j) {
    const std::size_t idx = index_of(out[j]);
    const std::size_t t = idx / tile;
    if (t >= tile_counts.size()) return "out[" + std::to_string(j) + "] is no input element";
    if (j == 0 || t != current) {
      if (j > 0 && run != tile_counts[current])
        return "the run of tile " + std::to_string(current) + " ends at out[" + std::to_string(j) + "] after " +
               std::to_string(run) + " of its " + std::to_string(tile_counts[current]) +
               " selected elements: a tile's elements must be contiguous in out";
      if (seen[t]) return "tile " + std::to_string(t) + " appears in two runs (again at out[" + std::to_string(j) + "])";
      seen[t] = 1;
      current = t;
      run = 1;
    } else {
      if (idx <= last)
        return "out[" + std::to_string(j) + "] (input index " + std::to_string(idx) +
               ") comes after input index " + std::to_string(last) +
               " within tile " + std::to_string(t) + ": the order within a tile must be the input order "
               "(an exclusive scan of the flags, in the order the elements were loaded)";
      ++run;
    }
    last = idx;
  }
  if (!out.empty() && run != tile_counts[current])
    return "the last run (tile " + std::to_string(current) + ") holds " + std::to_string(run) + " of its " +
           std::to_string(tile_counts[current]) + " selected elements";
  return {};
}

/// Where the arrays live and how much room the output has.
struct Layout {
  std::size_t in_offset = 0;   ///< elements past a 256-byte aligned allocation
  std::size_t out_offset = 0;  ///< elements of slack before the output
};

/// Runs `fn` on `in` with `capacity` elements of poisoned, guarded output
/// and a poisoned count, and checks count, guards, unwritten tail, contents
/// and the exercise's order promise. `unique_index`, when set, maps a value
/// back to its input index (the inputs are then unique) for the tile order.
template <class T, class Pred>
void check_filter(const Spec& spec, CopyIfFn<T, Pred> fn, const std::vector<T>& in, Pred pred, std::size_t capacity,
                  std::uint64_t s, const std::string& what, Layout layout = {},
                  std::size_t (*unique_index)(T) = nullptr) {
  const std::size_t n = in.size();
  const std::vector<T> expected = reference::copy_if(in, pred);
  DeviceBuffer<T> d_in(n + layout.in_offset + 1);
  if (n > 0)
    CUDALAB_CHECK(cudaMemcpy(d_in.data() + layout.in_offset, in.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  GuardedArray<T> out(capacity, layout.out_offset);
  DeviceBuffer<unsigned long long> d_count(1);
  d_count.fill_bytes(kPoison);
  fn(n > 0 ? d_in.data() + layout.in_offset : nullptr, n, pred, capacity > 0 ? out.data() : nullptr, capacity,
     d_count.data(), nullptr);
  CUDALAB_CHECK(cudaDeviceSynchronize());

  const std::string ctx = context(spec.exercise, n, s) + what + ", " + std::to_string(expected.size()) +
                          " selected, capacity " + std::to_string(capacity) + ": ";
  const unsigned long long count = d_count.download()[0];
  ASSERT_EQ(static_cast<unsigned long long>(expected.size()), count)
      << ctx << (count == kPoisonCount ? "*count was never written (set it, also when nothing is selected)"
                                       : "*count must be the number of selected elements, also when it exceeds "
                                         "the capacity (count every selected element, write only those that fit)");
  const std::string damage = out.guard_damage();
  ASSERT_EQ("", damage) << ctx << damage << ": check slot < capacity before every store";
  const std::size_t written = std::min<std::size_t>(expected.size(), capacity);
  const std::vector<T> actual = out.download();
  const T poison = GuardedArray<T>::poison_value();
  for (std::size_t k = written; k < capacity; ++k)
    ASSERT_TRUE(actual[k] == poison) << ctx << "out[" << k << "] was written although only " << written
                                     << " elements are selected: write only the selected elements";
  const std::vector<T> got(actual.begin(), actual.begin() + static_cast<std::ptrdiff_t>(written));

  if (spec.order == Order::kGlobal) {
    for (std::size_t k = 0; k < written; ++k)
      ASSERT_TRUE(expected[k] == got[k])
          << ctx << "first mismatch at out[" << k << "]: expected " << expected[k] << ", actual " << got[k]
          << (got[k] == poison ? " (never written)" : "")
          << ". A stable filter writes the k-th selected element to out[k]: the tile's prefix from the "
             "look-back plus the element's rank within the tile";
    return;
  }
  const std::string diff = multiset_difference(expected, got, written < expected.size());
  ASSERT_EQ("", diff) << ctx << (written < expected.size()
                                     ? "out[0, capacity) must hold selected elements, each at most once"
                                     : "out must hold every selected element exactly once");
  if (spec.order == Order::kWithinTiles && unique_index != nullptr && written == expected.size()) {
    std::vector<std::size_t> tile_counts((n + spec.tile - 1) / spec.tile, 0);
    for (std::size_t i = 0; i < n; ++i)
      if (pred(in[i])) ++tile_counts[i / spec.tile];
    const std::string problem = tile_order_problem(got, tile_counts, spec.tile, unique_index);
    ASSERT_EQ("", problem) << ctx << problem;
  }
}

// ----------------------------------------------------------------------------- inputs

/// int32 values uniform in [0, 100000): LessThan{1000 s} selects about s %.
inline std::vector<int> small_values(std::size_t n, std::uint64_t s) { return gen::uniform_int<int>(n, s, 0, 99999); }

/// Unique values in[i] = 2 i + b_i with b_i = 0 (even: selected by IsEven)
/// with probability per_1024 / 1024; the input index is value / 2.
template <class T>
std::vector<T> unique_values(std::size_t n, std::uint64_t s, unsigned per_1024) {
  const auto r = gen::uniform_int<unsigned>(n, s ^ 0x0DDull, 0, 1023);
  std::vector<T> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<T>(2 * static_cast<T>(i) + (r[i] < per_1024 ? 0 : 1));
  return out;
}
template <class T>
std::size_t index_of_unique(T v) {
  return static_cast<std::size_t>(v / 2);
}

inline const unsigned kSelectivities[] = {0, 1, 50, 99, 100};  // percent

// ----------------------------------------------------------------------------- tests

/// int32, LessThan, selectivity 0 %, 1 %, 50 %, 99 %, 100 %, capacity n.
inline void selectivities(const Spec& spec, std::size_t n) {
  CUDALAB_SKIP_IF_ABOVE_MAX_N(n);
  const auto s = seed();
  const std::vector<int> in = small_values(n, s);
  for (const unsigned pct : kSelectivities) {
    check_filter(spec, spec.lt32, in, LessThan<int>{static_cast<int>(pct * 1000)}, n, s,
                 "int32, x < " + std::to_string(pct * 1000) + " (" + std::to_string(pct) + " % selected)");
    if (::testing::Test::HasFatalFailure()) return;
  }
}

/// int64 values over the full 41-bit range and InRange (about 50 %), room to
/// spare; and int32 InRange of negative values (about 25 %).
inline void int64_and_ranges(const Spec& spec, std::size_t n) {
  CUDALAB_SKIP_IF_ABOVE_MAX_N(n);
  const auto s = seed();
  const long long big = 1ll << 40;
  const auto in64 = gen::uniform_int<long long>(n, s, -big, big);
  check_filter(spec, spec.range64, in64, InRange<long long>{-big / 2, big / 2}, n + 100, s,
               "int64 in [-2^40, 2^40], InRange{-2^39, 2^39}");
  if (::testing::Test::HasFatalFailure()) return;
  const auto in32 = gen::uniform_int<int>(n, s + 1, INT_MIN, INT_MAX);
  check_filter(spec, spec.range32, in32, InRange<int>{INT_MIN, INT_MIN / 2}, n, s,
               "int32 over the full range, InRange{INT_MIN, INT_MIN / 2}");
}

/// Unique values (2i or 2i + 1), IsEven at 50 % (int32) and 1 % (int64):
/// contents as a multiset and, for 4.3, the order within each tile.
inline void unique_values_in_order(const Spec& spec, std::size_t n) {
  CUDALAB_SKIP_IF_ABOVE_MAX_N(n);
  const auto s = seed();
  check_filter(spec, spec.even32, unique_values<int>(n, s, 512), IsEven{}, n, s,
               "unique int32 values 2i + b, IsEven (50 %)", {}, &index_of_unique<int>);
  if (::testing::Test::HasFatalFailure()) return;
  check_filter(spec, spec.even64, unique_values<long long>(n, s + 1, 10), IsEven{}, n, s,
               "unique int64 values 2i + b, IsEven (1 %)", {}, &index_of_unique<long long>);
}

/// Output buffers too small: capacity 0 (null out), 1, half, one short,
/// exact, one more; the count must still be the full number.
inline void capacity_too_small(const Spec& spec) {
  const auto s = seed();
  const std::size_t n = 100003;
  const std::vector<int> in = small_values(n, s);
  const LessThan<int> half{50000};
  const std::size_t selected = reference::copy_if(in, half).size();
  for (const std::size_t capacity : {std::size_t{0}, std::size_t{1}, selected / 2, selected - 1, selected,
                                     selected + 1}) {
    check_filter(spec, spec.lt32, in, half, capacity, s, "int32, 50 % selected");
    if (::testing::Test::HasFatalFailure()) return;
  }
  check_filter(spec, spec.lt32, in, LessThan<int>{100000}, n - 1, s, "int32, every element selected");
  if (::testing::Test::HasFatalFailure()) return;
  const auto in64 = unique_values<long long>(n, s, 700);
  check_filter(spec, spec.even64, in64, IsEven{}, 777, s, "unique int64, IsEven (68 %)", {},
               &index_of_unique<long long>);
}

/// Pointers that are not 16-byte aligned (input and output one element off).
inline void misaligned(const Spec& spec) {
  const auto s = seed();
  for (const std::size_t n : {std::size_t{4097}, std::size_t{(1u << 20) + 7}}) {
    check_filter(spec, spec.lt32, small_values(n, s), LessThan<int>{50000}, n, s,
                 "int32 with in and out one element past an aligned address", Layout{1, 1});
    if (::testing::Test::HasFatalFailure()) return;
    check_filter(spec, spec.even64, unique_values<long long>(n, s, 512), IsEven{}, n, s,
                 "int64 with in and out one element past an aligned address", Layout{1, 1},
                 &index_of_unique<long long>);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

/// Adversarial patterns: all equal, alternating (every other lane), only
/// the last element, only the first, negative even and odd numbers.
inline void patterns(const Spec& spec) {
  const auto s = seed();
  const std::size_t n = 65537;
  check_filter(spec, spec.lt32, gen::constant<int>(n, 7), LessThan<int>{8}, n, s, "all 7, x < 8 (all selected)");
  if (::testing::Test::HasFatalFailure()) return;
  check_filter(spec, spec.lt32, gen::constant<int>(n, 7), LessThan<int>{7}, n, s, "all 7, x < 7 (none)");
  if (::testing::Test::HasFatalFailure()) return;
  std::vector<int> ramp(n);
  for (std::size_t i = 0; i < n; ++i) ramp[i] = static_cast<int>(i);
  check_filter(spec, spec.even32, ramp, IsEven{}, n, s, "0, 1, 2, ..., IsEven (every other lane)", {},
               +[](int v) { return static_cast<std::size_t>(v); });
  if (::testing::Test::HasFatalFailure()) return;
  check_filter(spec, spec.lt32, ramp, LessThan<int>{1}, n, s, "0, 1, 2, ..., x < 1 (only the first element)");
  if (::testing::Test::HasFatalFailure()) return;
  std::vector<long long> down(n);
  for (std::size_t i = 0; i < n; ++i) down[i] = static_cast<long long>(n - i);
  check_filter(spec, spec.lt64, down, LessThan<long long>{2}, n, s, "n, n - 1, ..., 1, x < 2 (only the last)");
  if (::testing::Test::HasFatalFailure()) return;
  std::vector<long long> neg(n);
  for (std::size_t i = 0; i < n; ++i) neg[i] = -static_cast<long long>(i) - (1ll << 35);
  check_filter(spec, spec.even64, neg, IsEven{}, n, s, "negative int64, IsEven");
}

/// Unique values 2i + b_i (IsEven selects b_i = 0, index value / 2) where
/// element i is selected exactly when (i / period) % 2 == phase: runs of
/// `period` selected and `period` rejected elements.
template <class T>
std::vector<T> striped_values(std::size_t n, std::size_t period, std::size_t phase) {
  std::vector<T> out(n);
  for (std::size_t i = 0; i < n; ++i)
    out[i] = static_cast<T>(2 * static_cast<T>(i) + ((i / period) % 2 == phase ? 0 : 1));
  return out;
}

/// The periods of striped_values: 1, 8 and 32 (alternation inside one
/// thread's contiguous items and inside a warp), 128 (half a block of 256:
/// every element of the upper threads' strided loop rejected), 256 and 512
/// (one block-wide stride: each thread's loop alternates rejected and
/// selected, or meets two rejected in a row), 1024, 2048 and 4096 (whole
/// halves and whole tiles of the chapter's kernels rejected).
inline const std::size_t kStripePeriods[] = {1, 8, 32, 128, 256, 512, 1024, 2048, 4096};

/// A thread that meets several rejected elements in one loop over its items
/// (blocks of 256 threads x 8 items, strided by 256 or contiguous; 4.6's
/// vectors): stripes of selected and rejected elements of every period
/// above, both phases, at sizes one around the chapter's tiles (2048,
/// 4096), so the last tile is partial, full, or holds one element. Under a
/// sanitizer (CUDALAB_MAX_N set: every launch is slow there, and these are
/// logic mistakes, not races) one size and four periods.
inline void stride_patterns(const Spec& spec) {
  const bool sanitizing = max_n() != std::numeric_limits<std::size_t>::max();
  const std::vector<std::size_t> sizes =
      sanitizing ? std::vector<std::size_t>{4097}
                 : std::vector<std::size_t>{2047, 2049, 4095, 4097, 3 * 4096 + 1};
  for (const std::size_t n : sizes) {
    for (const std::size_t period : kStripePeriods) {
      if (sanitizing && period != 1 && period != 128 && period != 256 && period != 2048) continue;
      for (const std::size_t phase : {std::size_t{0}, std::size_t{1}}) {
        const std::string what = "unique int32 values 2i + b, IsEven selects element i exactly when (i / " +
                                 std::to_string(period) + ") % 2 == " + std::to_string(phase) +
                                 " (runs of " + std::to_string(period) +
                                 " rejected elements: a thread meets several in one loop; handle every item, "
                                 "never stop at the first rejected one)";
        check_filter(spec, spec.even32, striped_values<int>(n, period, phase), IsEven{}, n, 0, what, {},
                     &index_of_unique<int>);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
    for (const std::size_t period : {std::size_t{1}, std::size_t{256}, std::size_t{2048}}) {
      if (sanitizing && period != 256) continue;
      check_filter(spec, spec.even64, striped_values<long long>(n, period, 1), IsEven{}, n, 0,
                   "unique int64 values 2i + b, IsEven selects element i exactly when (i / " +
                       std::to_string(period) + ") % 2 == 1",
                   {}, &index_of_unique<long long>);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

/// Large inputs, several times each: races between blocks (or tiles) show
/// as rare failures. The stable filter (4.6) gets more and larger runs.
inline void repeated_large(const Spec& spec) {
  const bool stable = spec.order == Order::kGlobal;
  const std::size_t n = stable ? (1u << 24) + 5 : (1u << 22) + 1;
  CUDALAB_SKIP_IF_ABOVE_MAX_N(n);
  const auto s = seed();
  const std::vector<int> in = small_values(n, s);
  const int reps = stable ? 10 : 5;
  for (int rep = 0; rep < reps; ++rep) {
    const unsigned pct = kSelectivities[rep % 5];
    check_filter(spec, spec.lt32, in, LessThan<int>{static_cast<int>(pct * 1000)}, n, s,
                 "repetition " + std::to_string(rep) + ", " + std::to_string(pct) + " % selected");
    if (::testing::Test::HasFatalFailure()) return;
  }
}

/// Bad arguments throw std::invalid_argument before any CUDA call: no GPU needed.
inline void bad_input_throws(const Spec& spec) {
  int* some = reinterpret_cast<int*>(std::uintptr_t{256});  // never dereferenced
  auto* some_count = reinterpret_cast<unsigned long long*>(std::uintptr_t{512});
  const LessThan<int> p{5};
  EXPECT_THROW(spec.lt32(nullptr, 10, p, some, 10, some_count, nullptr), std::invalid_argument) << "null in, n > 0";
  EXPECT_THROW(spec.lt32(some, 10, p, nullptr, 10, some_count, nullptr), std::invalid_argument)
      << "null out, capacity > 0";
  EXPECT_THROW(spec.lt32(some, 10, p, some, 10, nullptr, nullptr), std::invalid_argument) << "null count";
  EXPECT_THROW(spec.lt32(nullptr, 0, p, nullptr, 0, nullptr, nullptr), std::invalid_argument)
      << "null count, n = 0";
  EXPECT_THROW(spec.lt32(some, cudalab::filter::max_elements + 1, p, some, 10, some_count, nullptr),
               std::invalid_argument)
      << "n above max_elements";
  auto* some64 = reinterpret_cast<long long*>(std::uintptr_t{1024});
  EXPECT_THROW(spec.range64(nullptr, 1, InRange<long long>{0, 1}, some64, 1, some_count, nullptr),
               std::invalid_argument)
      << "int64: null in, n > 0";
}

/// On the GPU: a rejected call changes neither the count nor the output.
inline void bad_input_changes_nothing(const Spec& spec) {
  GuardedArray<int> out(8);
  DeviceBuffer<unsigned long long> d_count(1);
  d_count.fill_bytes(kPoison);
  EXPECT_THROW(spec.lt32(nullptr, 4, LessThan<int>{5}, out.data(), 8, d_count.data(), nullptr),
               std::invalid_argument);
  EXPECT_THROW(spec.lt32(out.data(), cudalab::filter::max_elements + 1, LessThan<int>{5}, out.data(), 8,
                         d_count.data(), nullptr),
               std::invalid_argument);
  CUDALAB_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(kPoisonCount, d_count.download()[0]) << "[" << spec.exercise << "] a call that threw wrote *count";
  EXPECT_EQ(std::vector<int>(8, GuardedArray<int>::poison_value()), out.download())
      << "[" << spec.exercise << "] a call that threw wrote the output";
  EXPECT_EQ("", out.guard_damage()) << "[" << spec.exercise << "] a call that threw wrote a guard";
}

/// n = 0: *count becomes 0, nothing is written (also with a null input).
inline void empty_input(const Spec& spec) {
  GuardedArray<int> out(4);
  DeviceBuffer<unsigned long long> d_count(1);
  d_count.fill_bytes(kPoison);
  spec.lt32(nullptr, 0, LessThan<int>{5}, out.data(), 4, d_count.data(), nullptr);
  CUDALAB_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(0ull, d_count.download()[0]) << "[" << spec.exercise << "] n = 0 must set *count to 0";
  EXPECT_EQ(std::vector<int>(4, GuardedArray<int>::poison_value()), out.download())
      << "[" << spec.exercise << "] n = 0 wrote output";
}

// ----------------------------------------------------------------------------- LargeIndex

// Inputs of more than 2^31 elements, which the contract allows (n is a
// std::size_t, up to max_elements = 2^32 - 1), with more than 2^31 of them
// selected, so that output slots past 2^31 - 1 are written too. An input
// index kept in int becomes negative past 2^31 - 1 (and i < n is then false:
// the elements from 2^31 on are never looked at); an output slot kept in int
// (int slot = base + rank) becomes negative too, and converted back to
// std::size_t it fails slot < capacity: those elements are counted but never
// written. Neither shows at the sizes above, so this test fills 8 GiB of
// input on the device with a kernel of its own, gives the output 8 GiB more,
// and checks the output on the device against closed forms. The helpers
// follow LargeIndex of chapter 1 (tests/01-reduce-scan-histogram/sum_test_battery.cuh).

constexpr std::size_t k2To31 = std::size_t{1} << 31;
/// Int32Above2To31's n: 2^20 + 3 elements past 2^31 (over 500 tiles of every
/// kernel of the chapter, and a partial last tile).
constexpr std::size_t kAbove2To31 = k2To31 + (std::size_t{1} << 20) + 3;
/// The one rejected input index: in[2^31 - 1] = INT_MAX, and the predicate is
/// LessThan<int>{INT_MAX}. Every other element is selected: n - 1 of them,
/// more than 2^31. In the stable output (4.6), out[j] = in[j] below it and
/// in[j + 1] from it on.
constexpr std::size_t kRejected = k2To31 - 1;

/// The LargeIndex input: in[i] = the low 32 bits of i as an int (0, 1, ...,
/// INT_MAX, then INT_MIN, INT_MIN + 1, ... from index 2^31 on). Unique for
/// n <= 2^32, so a value tells its input index: (unsigned)value.
__host__ __device__ constexpr int large_index_value(std::size_t i) {
  return static_cast<int>(static_cast<std::uint32_t>(i));
}
__host__ __device__ constexpr std::size_t large_index_of(int v) {
  return static_cast<std::uint32_t>(v);
}
static_assert(large_index_value(kRejected) == INT_MAX && large_index_value(k2To31) == INT_MIN);
static_assert(large_index_of(large_index_value(kAbove2To31 - 1)) == kAbove2To31 - 1);
static_assert(large_index_of(static_cast<int>(0xA5A5A5A5u)) >= kAbove2To31,
              "the poison must not be a LargeIndex value");

/// Writes the LargeIndex pattern into in[0..n) (a grid-stride loop, 64-bit index).
__global__ void fill_large_index(int* in, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n; i += stride)
    in[i] = large_index_value(i);
}

__device__ inline unsigned long long warp_sum(unsigned long long v) {
  for (int d = 16; d > 0; d /= 2) v += __shfl_down_sync(0xffffffffu, v, d);
  return v;
}
__device__ inline unsigned long long warp_xor(unsigned long long v) {
  for (int d = 16; d > 0; d /= 2) v ^= __shfl_down_sync(0xffffffffu, v, d);
  return v;
}
__device__ inline unsigned long long warp_min(unsigned long long v) {
  for (int d = 16; d > 0; d /= 2) v = min(v, __shfl_down_sync(0xffffffffu, v, d));
  return v;
}

/// Sums (mod 2^64) over the selected input indices {0, ..., n - 1} without
/// kRejected: of i, of i^2, and their xor. In a check kernel, each thread
/// adds the indices it finds, its warp reduces them (every lane: launch whole
/// warps) and lane 0 flushes the warp's into the findings.
struct Checksums {
  unsigned long long sum = 0, sum_sq = 0, xor_all = 0;

  __device__ void add(unsigned long long i) {
    sum += i;
    sum_sq += i * i;
    xor_all ^= i;
  }
  __device__ void warp_reduce() {
    sum = warp_sum(sum);
    sum_sq = warp_sum(sum_sq);
    xor_all = warp_xor(xor_all);
  }
  __device__ void flush_to(Checksums* total) const {
    atomicAdd(&total->sum, sum);
    atomicAdd(&total->sum_sq, sum_sq);
    atomicXor(&total->xor_all, xor_all);
  }
};

/// How many places of an output a check kernel found wrong in one way, and
/// the first: each thread counts its own, its warp reduces them (every lane),
/// lane 0 flushes the warp's into the findings' two fields.
struct Tally {
  unsigned long long count = 0, first = ULLONG_MAX;

  __device__ void add(std::size_t j) {
    ++count;
    first = min(first, static_cast<unsigned long long>(j));
  }
  __device__ void warp_reduce() {
    count = warp_sum(count);
    first = warp_min(first);
  }
  __device__ void flush_to(unsigned long long* total, unsigned long long* first_total) const {
    if (count == 0) return;
    atomicAdd(total, count);
    atomicMin(first_total, first);
  }
};

/// The xor of 0, 1, ..., m.
constexpr unsigned long long xor_upto(unsigned long long m) {
  return m % 4 == 0 ? m : m % 4 == 1 ? 1 : m % 4 == 2 ? m + 1 : 0;
}
/// 0 + 1 + ... + m, mod 2^64.
constexpr unsigned long long sum_upto(unsigned long long m) {
  return m % 2 == 0 ? (m / 2) * (m + 1) : m * ((m + 1) / 2);
}
/// 0^2 + 1^2 + ... + m^2 = m (m + 1) (2m + 1) / 6, mod 2^64 (the divisions
/// done first, on the factors they divide exactly).
constexpr unsigned long long sum_sq_upto(unsigned long long m) {
  unsigned long long a = m, b = m + 1, c = 2 * m + 1;
  if (a % 2 == 0) a /= 2; else b /= 2;
  if (a % 3 == 0) a /= 3; else if (b % 3 == 0) b /= 3; else c /= 3;
  return a * b * c;
}
/// The checksums of the selected elements of the LargeIndex input of n > 2^31 elements.
constexpr Checksums large_index_checksums(std::size_t n) {
  const unsigned long long m = n - 1, r = kRejected;
  return {sum_upto(m) - r, sum_sq_upto(m) - r * r, xor_upto(m) ^ r};
}
static_assert(xor_upto(0) == 0 && xor_upto(3) == 0 && xor_upto(5) == (1 ^ 2 ^ 3 ^ 4 ^ 5) && xor_upto(6) == 7);
static_assert(sum_upto(10) == 55 && sum_upto(9) == 45 && sum_sq_upto(3) == 14 && sum_sq_upto(10) == 385 &&
              sum_sq_upto(4) == 30);
static_assert(large_index_checksums(kAbove2To31).sum == 2308095362007040004ull &&
              large_index_checksums(kAbove2To31).sum_sq == 1164183269998592004ull &&
              large_index_checksums(kAbove2To31).xor_all == 4293918716ull);

/// What the check kernel finds in out[0 .. capacity + kGuard), with
/// `selected` = n - 1 elements expected in out[0 .. selected).
struct LargeIndexFindings {
  unsigned long long unwritten;       ///< out[j], j < selected, still the poison
  unsigned long long first_unwritten; ///< the smallest such j
  unsigned long long foreign;         ///< out[j], j < selected, no selected input (not poison)
  unsigned long long first_foreign;   ///< the smallest such j
  unsigned long long misplaced;       ///< out[j], j < selected, not the stable output's value
  unsigned long long first_misplaced; ///< the smallest such j
  unsigned long long written_past;    ///< out[j], selected <= j < capacity + kGuard, not the poison
  unsigned long long first_past;      ///< the smallest such j
  Checksums sums;                     ///< over the selected values found in out[0 .. selected)
};

/// Checks out[0 .. end) (end = capacity + kGuard) of the LargeIndex test in
/// one pass; `f` starts zeroed, its first_* at ULLONG_MAX. Launch with whole
/// warps (the blockDim a multiple of 32): every lane runs the reductions.
__global__ void check_large_index(const int* out, std::size_t selected, std::size_t end, LargeIndexFindings* f) {
  const int poison = static_cast<int>(0xA5A5A5A5u);
  const std::size_t n = selected + 1;
  Tally unwritten, foreign, misplaced, past;
  Checksums sums;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t j = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; j < end; j += stride) {
    const int v = out[j];
    if (j >= selected) {
      if (v != poison) past.add(j);
      continue;
    }
    if (v != large_index_value(j < kRejected ? j : j + 1)) misplaced.add(j);
    if (v == poison) {
      unwritten.add(j);
      continue;
    }
    const std::size_t i = large_index_of(v);
    if (i >= n || i == kRejected) {
      foreign.add(j);
      continue;
    }
    sums.add(i);
  }
  unwritten.warp_reduce();
  foreign.warp_reduce();
  misplaced.warp_reduce();
  past.warp_reduce();
  sums.warp_reduce();
  if (threadIdx.x % 32 != 0) return;
  unwritten.flush_to(&f->unwritten, &f->first_unwritten);
  foreign.flush_to(&f->foreign, &f->first_foreign);
  misplaced.flush_to(&f->misplaced, &f->first_misplaced);
  past.flush_to(&f->written_past, &f->first_past);
  sums.flush_to(&f->sums);
}


/// What a wrong LargeIndex count says about the index arithmetic.
inline std::string large_count_diagnosis(std::size_t n, unsigned long long expected, unsigned long long actual) {
  if (actual == kPoisonCount) return "*count was never written (it still holds the poison value).";
  if (actual == 0)
    return "*count is 0: nothing was selected. Is n, or the index compared with it, kept in int (n = " +
           std::to_string(n) + " does not fit: it becomes negative)?";
  if (actual == k2To31 - 1)
    return "That is exactly the number of selected elements below index 2^31: no element from index 2^31 on "
           "was looked at. An int index wraps past 2^31 - 1 to a negative number (and i < n is then false): "
           "use std::size_t for i, as in the lesson: blockIdx.x * static_cast<std::size_t>(blockDim.x) + "
           "threadIdx.x.";
  if (actual < expected)
    return "Selected elements were not counted: an index or offset computed in 32 bits (int wraps past "
           "2^31 - 1, unsigned past 2^32 - 1) skips elements. Compute every input index in std::size_t (the "
           "thread's index, the tile's or chunk's first element, the stride).";
  return "Elements were counted more than once: an index computed in 32 bits wraps and lands on elements "
         "already counted. Compute every input index in std::size_t.";
}

/// Filters n > 2^31 int elements of the LargeIndex pattern (filled on the
/// device) with LessThan<int>{INT_MAX}, capacity n: n - 1 selected, out[0 ..
/// n - 1) written, out[n - 1] and the kGuard elements after the output left
/// alone. Checks *count exactly and the output on the device: the multiset
/// (no poison, no foreign value, sum, sum of squares and xor of the input
/// indices as in closed form) for every order, each slot's value for
/// Order::kGlobal. Skips where the device (or its profile) lacks the memory,
/// or under a sanitizer's size cap.
inline void int32_large_index(const Spec& spec, std::size_t n) {
  CUDALAB_SKIP_IF_ABOVE_MAX_N(n);
  const std::size_t capacity = n;
  const std::size_t bytes = (n + capacity + kGuard) * sizeof(int);
  std::optional<DeviceBuffer<int>> in, out;
  if (const std::string why = allocate_large(bytes, "n = " + std::to_string(n) + " int elements in and out", [&] {
        in.emplace(n);
        out.emplace(capacity + kGuard);
      });
      !why.empty())
    GTEST_SKIP() << why;
  fill_large_index<<<1024, 256>>>(in->data(), n);
  CUDALAB_CHECK_LAUNCH();
  out->fill_bytes(kPoison);
  DeviceBuffer<unsigned long long> d_count(1);
  d_count.fill_bytes(kPoison);
  CUDALAB_CHECK(cudaDeviceSynchronize());

  const std::size_t selected = n - 1;
  const std::string ctx = context(spec.exercise, n, 0) +
                          "int32 in[i] = the low 32 bits of i (0, 1, ..., INT_MAX at index 2^31 - 1, then INT_MIN, "
                          "...), x < INT_MAX (every element but in[2^31 - 1] selected: " +
                          std::to_string(selected) + ", more than 2^31), capacity " + std::to_string(capacity) +
                          ": ";
  try {
    spec.lt32(in->data(), n, LessThan<int>{INT_MAX}, out->data(), capacity, d_count.data(), nullptr);
    CUDALAB_CHECK(cudaDeviceSynchronize());
  } catch (const std::exception& e) {
    FAIL() << ctx << "the call failed: " << e.what()
           << "\nAn index computed in 32 bits wraps (int past 2^31 - 1 to a negative number, unsigned past "
              "2^32 - 1 to 0) and reads or writes outside the arrays: use std::size_t for every index and "
              "output slot, as in the lesson.";
  }
  const unsigned long long count = d_count.download()[0];
  ASSERT_EQ(static_cast<unsigned long long>(selected), count)
      << ctx << "*count is " << count << ". " << large_count_diagnosis(n, selected, count);

  LargeIndexFindings init{};
  init.first_unwritten = init.first_foreign = init.first_misplaced = init.first_past = ULLONG_MAX;
  DeviceBuffer<LargeIndexFindings> d_findings(std::vector<LargeIndexFindings>{init});
  check_large_index<<<1024, 256>>>(out->data(), selected, capacity + kGuard, d_findings.data());
  CUDALAB_CHECK_LAUNCH();
  const LargeIndexFindings f = d_findings.download()[0];
  const auto value_at = [&](unsigned long long j) {
    int v = 0;
    CUDALAB_CHECK(cudaMemcpy(&v, out->data() + j, sizeof v, cudaMemcpyDeviceToHost));
    return v;
  };
  const std::string int_slot =
      "An output slot kept in int (int slot = base + rank) becomes negative past 2^31 - 1; converted to "
      "std::size_t for slot < capacity it is huge, so the element is counted but never written. Keep the "
      "slot, the base the atomic (or the look-back) returns and the offsets added to it in std::size_t or "
      "unsigned long long.";
  ASSERT_EQ(0ull, f.written_past)
      << ctx << f.written_past << " element(s) at or past out[" << selected << "] were written (the first, out["
      << f.first_past << "] = " << value_at(f.first_past) << ") although only " << selected
      << " elements are selected"
      << (f.first_past >= capacity ? ", past the capacity: check slot < capacity before every store" : "")
      << ". A slot computed in 32 bits wraps and lands elsewhere: compute it in std::size_t.";
  ASSERT_EQ(0ull, f.unwritten) << ctx << f.unwritten << " of out[0] to out[" << selected - 1
                               << "] were never written (they still hold the poison), the first out["
                               << f.first_unwritten << "]"
                               << (f.first_unwritten == k2To31 ? ": exactly the slots from 2^31 on. " : ". ")
                               << int_slot;
  ASSERT_EQ(0ull, f.foreign) << ctx << f.foreign << " output element(s) are no selected input, the first out["
                             << f.first_foreign << "] = " << value_at(f.first_foreign)
                             << (value_at(f.first_foreign) == INT_MAX ? " (the one rejected element, in[2^31 - 1])"
                                                                      : "")
                             << ". Write only selected elements, from in[i] with i computed in std::size_t.";
  const Checksums want = large_index_checksums(n);
  ASSERT_TRUE(f.sums.sum == want.sum && f.sums.sum_sq == want.sum_sq && f.sums.xor_all == want.xor_all)
      << ctx << "out[0, " << selected << ") holds selected elements only, but not each exactly once: their input "
      << "indices sum to " << f.sums.sum << " (expected " << want.sum << "), their squares to " << f.sums.sum_sq
      << " (expected " << want.sum_sq << " mod 2^64), their xor is " << f.sums.xor_all << " (expected "
      << want.xor_all << "). Some were written twice, over others: an index or slot computed in 32 bits wraps "
      << "past 2^31 - 1 (int) or 2^32 - 1 (unsigned). Compute every index and slot in std::size_t.";
  if (spec.order == Order::kGlobal) {
    const unsigned long long j = f.first_misplaced;
    ASSERT_EQ(0ull, f.misplaced)
        << ctx << f.misplaced << " slot(s) hold the wrong element, the first out[" << j << "] = " << value_at(j)
        << ", expected " << large_index_value(j < kRejected ? j : j + 1)
        << " (in[" << (j < kRejected ? j : j + 1) << "]). A stable filter writes the k-th selected element to "
        << "out[k]: the tile's prefix from the look-back plus the element's rank within the tile, in std::size_t.";
  }
}

}  // namespace cudalab::test::filter

/// Defines the suites Suite (by size), Suite##Cases (fixed cases on the GPU),
/// Suite##LargeIndex (n > 2^31, more than 2^31 selected, where the device has
/// the memory) and Suite##BadInput (host only) for the filter template `function` (a
/// name in cudalab::filter) of `exercise` with the order promise `order`.
#define CUDALAB_FILTER_TEST_SUITES(Suite, exercise, function, order, tile)                          \
  namespace {                                                                                       \
  const ::cudalab::test::filter::Spec& Suite##Spec() {                                              \
    using namespace ::cudalab::filter;                                                              \
    static const ::cudalab::test::filter::Spec spec{exercise,                                       \
                                                    order,                                          \
                                                    tile,                                           \
                                                    &function<int, LessThan<int>>,                  \
                                                    &function<int, IsEven>,                         \
                                                    &function<int, InRange<int>>,                   \
                                                    &function<long long, LessThan<long long>>,      \
                                                    &function<long long, IsEven>,                   \
                                                    &function<long long, InRange<long long>>};      \
    return spec;                                                                                    \
  }                                                                                                 \
  class Suite : public ::cudalab::test::GpuTestWithParam<std::size_t> {};                           \
  TEST_P(Suite, Selectivities) { ::cudalab::test::filter::selectivities(Suite##Spec(), GetParam()); } \
  TEST_P(Suite, Int64AndRanges) { ::cudalab::test::filter::int64_and_ranges(Suite##Spec(), GetParam()); } \
  TEST_P(Suite, UniqueValues) {                                                                     \
    ::cudalab::test::filter::unique_values_in_order(Suite##Spec(), GetParam());                     \
  }                                                                                                 \
  INSTANTIATE_TEST_SUITE_P(Sizes, Suite, ::testing::ValuesIn(::cudalab::test::filter::kSizes),      \
                           ::cudalab::test::filter::size_name);                                     \
  class Suite##Cases : public ::cudalab::test::GpuTest {};                                          \
  TEST_F(Suite##Cases, EmptyInput) { ::cudalab::test::filter::empty_input(Suite##Spec()); }         \
  TEST_F(Suite##Cases, CapacityTooSmall) { ::cudalab::test::filter::capacity_too_small(Suite##Spec()); } \
  TEST_F(Suite##Cases, Misaligned) { ::cudalab::test::filter::misaligned(Suite##Spec()); }          \
  TEST_F(Suite##Cases, Patterns) { ::cudalab::test::filter::patterns(Suite##Spec()); }              \
  TEST_F(Suite##Cases, StridePatterns) { ::cudalab::test::filter::stride_patterns(Suite##Spec()); } \
  TEST_F(Suite##Cases, RepeatedLarge) { ::cudalab::test::filter::repeated_large(Suite##Spec()); }   \
  TEST_F(Suite##Cases, BadInputChangesNothing) {                                                    \
    ::cudalab::test::filter::bad_input_changes_nothing(Suite##Spec());                              \
  }                                                                                                 \
  class Suite##LargeIndex : public ::cudalab::test::GpuTest {};                                     \
  TEST_F(Suite##LargeIndex, Int32Above2To31) {                                                      \
    ::cudalab::test::filter::int32_large_index(Suite##Spec(), ::cudalab::test::filter::kAbove2To31); \
  }                                                                                                 \
  TEST(Suite##BadInput, Throws) { ::cudalab::test::filter::bad_input_throws(Suite##Spec()); }       \
  }  // namespace
