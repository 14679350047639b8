// The test battery shared by chapter 2 (cudalab/sort.cuh): segment sorts
// (2.1, 2.2), whole-array sorts (2.3, 2.7) and merges of sorted runs
// (2.4 to 2.6), keys and key-value pairs. Every output is compared with the
// CPU reference (reference/sort_reference.hpp), which is unique: sorted
// keys, and for pairs the stable order. A mismatch is explained: not sorted,
// not a permutation of the input, or equal keys out of their input order.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cudalab/compare.hpp"
#include "cudalab/device_buffer.cuh"
#include "cudalab/generators.hpp"
#include "cudalab/sort.cuh"
#include "cudalab/test/harness.hpp"
#include "sort_reference.hpp"

namespace cudalab::test::sort {

constexpr unsigned char kPoison = 0xA5;  // unwritten output reads 0xA5A5A5A5
constexpr int kPoisonInt = static_cast<int>(0xA5A5A5A5u);
constexpr std::size_t kGuard = 64;       // poisoned elements after the output, must stay untouched
constexpr std::size_t kTile = 1920;      // the tile of 2.6 (128 threads x 15 keys)

/// What a function does with its input.
enum class Kind {
  Segments,  ///< sorts each segment of `param` keys (2.1, 2.2)
  Whole,     ///< sorts the whole array (2.3, 2.7); param unused
  Merge,     ///< merges pairs of sorted runs of `param` keys (2.4 to 2.6)
};

/// keys: fn(in, n, out, param, stream).
using KeysFn = std::function<void(const int*, std::size_t, int*, std::size_t, cudaStream_t)>;
/// pairs: fn(keys_in, values_in, n, keys_out, values_out, param, stream).
using PairsFn =
    std::function<void(const int*, const int*, std::size_t, int*, int*, std::size_t, cudaStream_t)>;

/// What the battery needs to know about an exercise.
struct Spec {
  const char* exercise;             ///< e.g. "2.1 odd_even_transposition_sort"
  Kind kind;
  KeysFn keys;
  PairsFn pairs;                    ///< empty when the exercise has no pairs overload
  std::size_t param;                ///< segment or run of the size-by-size tests
  std::vector<std::size_t> params;  ///< every segment or run to test around its boundaries
  std::size_t max_param;            ///< largest segment (0: no limit, or no segment)
  bool in_place;                    ///< out == in allowed
  std::size_t max_n;                ///< the function's largest n
};

/// The edge sizes of docs/guides/contributing.md ("Tests"), every tile boundary (1024, 2048, 1920
/// and its multiples, the tile of 8192 and the power-of-two padding of 2.3; 2.7's tiles of 4352 and
/// 8704 in its own suite), a prime, 2^20 + 7 and one large size.
inline const std::vector<std::size_t> kSizes = {
    0, 1, 2, 3, 15, 16, 17, 31, 32, 33, 255, 256, 257, 1023, 1024, 1025, 1919, 1920, 1921, 2047, 2048,
    2049, 3839, 3840, 3841, 4095, 4096, 4097, 7681, 8191, 8192, 8193, 65537, 1000003, (1u << 20) + 7,
    (1u << 22) - 1, (1u << 24) + 3};

inline std::string size_name(const ::testing::TestParamInfo<std::size_t>& info) {
  return "n" + std::to_string(info.param);
}

/// Input patterns: random over the int32 range, and the adversarial ones.
enum class Pattern { Random, Sorted, Reversed, AllEqual, FewDistinct, Extremes, Narrow };

inline const char* pattern_name(Pattern p) {
  switch (p) {
    case Pattern::Random: return "random keys over [INT_MIN, INT_MAX]";
    case Pattern::Sorted: return "already sorted keys";
    case Pattern::Reversed: return "reverse-sorted keys";
    case Pattern::AllEqual: return "all keys equal";
    case Pattern::FewDistinct: return "keys from {0, 1, 2, 3} (many ties)";
    case Pattern::Extremes: return "keys from {INT_MIN, -1, 0, INT_MAX}";
    case Pattern::Narrow: return "keys in [-1000, 1000]";
  }
  return "?";
}

inline const std::vector<Pattern> kPatterns = {Pattern::Random,      Pattern::Sorted,   Pattern::Reversed,
                                               Pattern::AllEqual,    Pattern::FewDistinct,
                                               Pattern::Extremes,    Pattern::Narrow};

/// n keys of pattern `p` from `seed`.
inline std::vector<int> make_keys(Pattern p, std::size_t n, std::uint64_t seed) {
  switch (p) {
    case Pattern::Random: return gen::uniform_int<int>(n, seed, INT_MIN, INT_MAX);
    case Pattern::Sorted: {
      auto k = gen::uniform_int<int>(n, seed, INT_MIN, INT_MAX);
      std::sort(k.begin(), k.end());
      return k;
    }
    case Pattern::Reversed: {
      auto k = gen::uniform_int<int>(n, seed, -1000000, 1000000);
      std::sort(k.begin(), k.end(), [](int a, int b) { return b < a; });
      return k;
    }
    case Pattern::AllEqual: return gen::constant(n, 7);
    case Pattern::FewDistinct: return gen::uniform_int<int>(n, seed, 0, 3);
    case Pattern::Extremes: {
      auto k = gen::uniform_int<int>(n, seed, 0, 3);
      for (int& x : k) x = x == 0 ? INT_MIN : x == 1 ? -1 : x == 2 ? 0 : INT_MAX;
      return k;
    }
    case Pattern::Narrow: return gen::uniform_int<int>(n, seed, -1000, 1000);
  }
  return {};
}

/// The input a function of `kind` expects: for merges, every run sorted.
inline std::vector<int> prepare(const Spec& s, std::vector<int> keys, std::size_t param) {
  if (s.kind == Kind::Merge) return reference::sort_segments(std::move(keys), param);
  return keys;
}

/// The expected result of pairs (values = input positions).
inline reference::Pairs expected_pairs(const Spec& s, const reference::Pairs& in, std::size_t param) {
  switch (s.kind) {
    case Kind::Segments: return reference::stable_sort_pairs(in, param);
    case Kind::Whole: return reference::stable_sort_pairs(in, 0);
    case Kind::Merge: return reference::merge_runs(in, param);
  }
  return in;
}

/// Copies `host` to a fresh device allocation of n + kGuard poisoned elements.
inline DeviceBuffer<int> upload_guarded(const std::vector<int>& host) {
  DeviceBuffer<int> buf(host.size() + kGuard);
  buf.fill_bytes(kPoison);
  if (!host.empty())
    CUDALAB_CHECK(cudaMemcpy(buf.data(), host.data(), host.size() * sizeof(int), cudaMemcpyHostToDevice));
  return buf;
}

/// The first n elements, and whether the kGuard after them are still poison.
inline std::pair<std::vector<int>, bool> download_guarded(const DeviceBuffer<int>& buf, std::size_t n) {
  std::vector<int> all = buf.download();
  bool intact = true;
  for (std::size_t g = n; g < all.size(); ++g) intact &= all[g] == kPoisonInt;
  all.resize(n);
  return {all, intact};
}

/// The sentence that explains a wrong output: what is wrong, and the likely mistake.
inline std::string diagnose(const Spec& s, const std::vector<int>& in, const std::vector<int>& expected,
                            const std::vector<int>& actual, std::size_t param) {
  std::ostringstream why;
  const std::size_t at = first_mismatch(expected, actual).value_or(0);
  const std::size_t unit = s.kind == Kind::Segments ? param : s.kind == Kind::Merge ? 2 * param : 0;
  const std::size_t unsorted = reference::first_unsorted(actual, unit);
  if (at < actual.size() && actual[at] == kPoisonInt &&
      std::find(in.begin(), in.end(), kPoisonInt) == in.end()) {
    why << "out[" << at << "] was never written (it still holds the poison 0xA5A5A5A5): a thread past "
           "the end returned early, a segment or tile was skipped, or the kernel never ran (the "
           "starter's TODO?).";
  } else if (actual == in) {
    why << "the output equals the input: nothing was sorted (the starter's TODO?).";
  } else if (!same_multiset(in, actual)) {
    why << "the output is not a permutation of the input: a key was lost or duplicated (a race "
           "between a read and a write of shared memory, a missing __syncthreads(), two keys given "
           "the same position, or a padding key stored).";
  } else if (unsorted < actual.size()) {
    why << "the output is a permutation of the input but not sorted: out[" << unsorted << "] = "
        << actual[unsorted] << " > out[" << unsorted + 1 << "] = " << actual[unsorted + 1]
        << (unit != 0 ? " (inside one " + std::string(s.kind == Kind::Merge ? "merged run" : "segment") +
                            " of " + std::to_string(unit) + ")"
                      : std::string())
        << ": check the number of phases or steps, the comparison direction, and the barriers.";
  } else {
    why << "the keys are sorted but differ from the reference at index " << at
        << ": keys moved across a " << (s.kind == Kind::Segments ? "segment" : "pair of runs")
        << " boundary, or the boundaries are wrong.";
  }
  return why.str();
}

/// Runs the keys function on `in` (prepared), poisoned output, and compares.
inline void expect_keys(const Spec& s, const std::vector<int>& in, std::size_t param, std::uint64_t seed,
                        const std::string& what, bool in_place = false) {
  const std::size_t n = in.size();
  const std::vector<int> expected =
      s.kind == Kind::Merge ? reference::merge_runs(in, param)
                            : reference::sort_segments(in, s.kind == Kind::Segments ? param : 0);
  DeviceBuffer<int> d_in = upload_guarded(in);
  DeviceBuffer<int> d_out(in_place ? 0 : n + kGuard);
  d_out.fill_bytes(kPoison);
  DeviceBuffer<int>& result = in_place ? d_in : d_out;
  s.keys(n > 0 ? d_in.data() : nullptr, n, n > 0 ? result.data() : nullptr, param, nullptr);
  CUDALAB_CHECK(cudaDeviceSynchronize());
  const auto [actual, intact] = download_guarded(result, n);
  const std::string where = std::string(s.kind == Kind::Segments ? ", segment = "
                                        : s.kind == Kind::Merge   ? ", run = "
                                                                  : "") +
                            (s.kind == Kind::Whole ? "" : std::to_string(param));
  ASSERT_EQ(expected, actual) << context(s.exercise, n, seed) << what << where
                              << (in_place ? ", in place (out == in)" : "") << ": "
                              << describe_first_mismatch(expected, actual) << ". "
                              << diagnose(s, in, expected, actual, param);
  ASSERT_TRUE(intact) << context(s.exercise, n, seed) << what << where
                      << ": the call wrote past out[n - 1] (a store without the i < n guard, or the "
                         "padding stored).";
  if (!in_place) {
    const auto [after, in_intact] = download_guarded(d_in, n);
    ASSERT_TRUE(after == in && in_intact) << context(s.exercise, n, seed) << what << where
                                          << ": the input was modified (it is const).";
  }
}

/// Runs the pairs function with values = input positions and checks the stable result.
inline void expect_pairs(const Spec& s, const std::vector<int>& keys, std::size_t param, std::uint64_t seed,
                         const std::string& what, bool in_place = false) {
  const std::size_t n = keys.size();
  reference::Pairs in{keys, std::vector<int>(n)};
  std::iota(in.values.begin(), in.values.end(), 0);
  const reference::Pairs expected = expected_pairs(s, in, param);
  DeviceBuffer<int> k_in = upload_guarded(in.keys), v_in = upload_guarded(in.values);
  DeviceBuffer<int> k_out(in_place ? 0 : n + kGuard), v_out(in_place ? 0 : n + kGuard);
  k_out.fill_bytes(kPoison);
  v_out.fill_bytes(kPoison);
  DeviceBuffer<int>& kr = in_place ? k_in : k_out;
  DeviceBuffer<int>& vr = in_place ? v_in : v_out;
  s.pairs(n > 0 ? k_in.data() : nullptr, n > 0 ? v_in.data() : nullptr, n, n > 0 ? kr.data() : nullptr,
          n > 0 ? vr.data() : nullptr, param, nullptr);
  CUDALAB_CHECK(cudaDeviceSynchronize());
  const auto [ak, k_intact] = download_guarded(kr, n);
  const auto [av, v_intact] = download_guarded(vr, n);
  const std::string where = s.kind == Kind::Merge ? ", run = " + std::to_string(param) : std::string();
  ASSERT_EQ(expected.keys, ak) << context(s.exercise, n, seed) << what << where << ", key-value pairs: keys: "
                               << describe_first_mismatch(expected.keys, ak) << ". "
                               << diagnose(s, in.keys, expected.keys, ak, param);
  const auto at = first_mismatch(expected.values, av);
  std::string why;
  if (at && *at < n) {
    const int v = av[*at];
    if (v >= 0 && static_cast<std::size_t>(v) < n && in.keys[static_cast<std::size_t>(v)] == ak[*at])
      why = "the value belongs to an equal key, but a different one: equal keys left their input order "
            "(not stable). Take the second run's key only when it is strictly smaller; swap only on "
            "strictly smaller.";
    else
      why = "the value did not travel with its key (moved from the wrong index, or never written).";
  }
  ASSERT_FALSE(at.has_value()) << context(s.exercise, n, seed) << what << where
                               << ", key-value pairs with value = input position: values: "
                               << describe_first_mismatch(expected.values, av) << ". " << why;
  ASSERT_TRUE(k_intact && v_intact) << context(s.exercise, n, seed) << what
                                    << ": the call wrote past keys_out or values_out[n - 1].";
}

/// Random keys at size n with the exercise's default segment or run.
inline void random_by_size(const Spec& s, std::size_t n) {
  CUDALAB_SKIP_IF_ABOVE_MAX_N(n);
  const auto sd = seed();
  expect_keys(s, prepare(s, make_keys(Pattern::Random, n, sd), s.param), s.param, sd,
              pattern_name(Pattern::Random));
}

/// Every pattern at sizes around the tiles.
inline void patterns(const Spec& s) {
  const auto sd = seed();
  for (const std::size_t n : {std::size_t{1}, std::size_t{33}, std::size_t{2049}, std::size_t{65537},
                              std::size_t{(1u << 20) + 7}}) {
    if (n > max_n()) continue;
    for (const Pattern p : kPatterns) {
      expect_keys(s, prepare(s, make_keys(p, n, sd), s.param), s.param, sd, pattern_name(p));
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

/// Every segment or run of the exercise, on sizes around it and its multiples.
inline void every_param(const Spec& s) {
  const auto sd = seed();
  for (const std::size_t param : s.params) {
    for (const std::size_t n : {param - 1, param, param + 1, 2 * param - 1, 2 * param, 2 * param + 1,
                                3 * param + 5, 7 * param + 3, std::size_t{100003}}) {
      if (n == 0 || n > max_n() || n > (std::size_t{1} << 23)) continue;
      for (const Pattern p : {Pattern::Random, Pattern::FewDistinct, Pattern::Reversed}) {
        expect_keys(s, prepare(s, make_keys(p, n, sd + param), param), param, sd + param, pattern_name(p));
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

/// Stability with pairs (value = input position), on ties of every kind.
/// Registered (CUDALAB_SORT_TEST_STABILITY) only for exercises with a pairs overload.
inline void stability(const Spec& s) {
  ASSERT_TRUE(static_cast<bool>(s.pairs)) << "[" << s.exercise << "] has no pairs overload: do not register "
                                             "CUDALAB_SORT_TEST_STABILITY for it";
  const auto sd = seed();
  std::vector<std::size_t> params = s.kind == Kind::Merge ? s.params : std::vector<std::size_t>{0};
  for (const std::size_t param : params) {
    for (const std::size_t n : {std::size_t{1}, std::size_t{31}, std::size_t{1921}, std::size_t{7681},
                                std::size_t{100003}, std::size_t{(1u << 20) + 7}}) {
      if (n > max_n()) continue;
      for (const Pattern p : {Pattern::FewDistinct, Pattern::AllEqual, Pattern::Extremes, Pattern::Random}) {
        expect_pairs(s, prepare(s, make_keys(p, n, sd + n), param), param, sd + n, pattern_name(p));
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

/// Large pairs (2.7).
inline void large_pairs(const Spec& s, std::size_t n) {
  CUDALAB_SKIP_IF_ABOVE_MAX_N(n);
  const auto sd = seed();
  expect_pairs(s, prepare(s, make_keys(Pattern::Narrow, n, sd), s.param), s.param, sd,
               pattern_name(Pattern::Narrow));
}

/// out == in where the contract allows it. Registered (CUDALAB_SORT_TEST_IN_PLACE)
/// only for exercises that allow it; the others must throw (bad_input_throws).
inline void in_place(const Spec& s) {
  ASSERT_TRUE(s.in_place) << "[" << s.exercise << "] does not allow out == in: do not register "
                             "CUDALAB_SORT_TEST_IN_PLACE for it";
  const auto sd = seed();
  for (const std::size_t n : {std::size_t{1}, std::size_t{1025}, std::size_t{4097}, std::size_t{100003},
                              std::size_t{(1u << 20) + 7}}) {
    if (n > max_n()) continue;
    expect_keys(s, make_keys(Pattern::Random, n, sd), s.param, sd, pattern_name(Pattern::Random), true);
    if (::testing::Test::HasFatalFailure()) return;
    if (s.pairs) {
      expect_pairs(s, make_keys(Pattern::FewDistinct, n, sd), s.param, sd, pattern_name(Pattern::FewDistinct),
                   true);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

/// n = 0 launches nothing and writes nothing, with null or valid pointers.
inline void zero_writes_nothing(const Spec& s) {
  DeviceBuffer<int> in(4), out(4);
  out.fill_bytes(kPoison);
  s.keys(nullptr, 0, nullptr, s.param, nullptr);
  s.keys(in.data(), 0, out.data(), s.param, nullptr);
  if (s.pairs) s.pairs(in.data(), in.data(), 0, out.data(), out.data(), s.param, nullptr);
  CUDALAB_CHECK(cudaDeviceSynchronize());
  for (const int x : out.download()) ASSERT_EQ(kPoisonInt, x) << "[" << s.exercise << "] n = 0 must write nothing";
}

/// The same input many times: a race shows as a rare wrong answer.
inline void repeated_runs(const Spec& s) {
  const auto sd = seed();
  const std::size_t n = std::min<std::size_t>((1u << 20) + 7, max_n());
  const auto in = prepare(s, make_keys(Pattern::FewDistinct, n, sd), s.param);
  const std::vector<int> expected =
      s.kind == Kind::Merge ? reference::merge_runs(in, s.param)
                            : reference::sort_segments(in, s.kind == Kind::Segments ? s.param : 0);
  DeviceBuffer<int> d_in(in), d_out(n);
  const bool sanitizing = max_n() != std::numeric_limits<std::size_t>::max();
  for (int r = 0; r < (sanitizing ? 2 : 10); ++r) {
    d_out.fill_bytes(kPoison);
    s.keys(d_in.data(), n, d_out.data(), s.param, nullptr);
    CUDALAB_CHECK(cudaDeviceSynchronize());
    const std::vector<int> actual = d_out.download();
    ASSERT_EQ(expected, actual) << context(s.exercise, n, sd) << "run " << r + 1
                                << " on the same input: " << describe_first_mismatch(expected, actual) << ". "
                                << (r > 0 ? "Earlier runs were right, so this is a race: a missing "
                                            "__syncthreads() between a write and a read of shared memory."
                                          : diagnose(s, in, expected, actual, s.param));
  }
}

/// Bad arguments throw std::invalid_argument before any CUDA call: no GPU needed.
inline void bad_input_throws(const Spec& s) {
  const int* some_in = reinterpret_cast<const int*>(std::uintptr_t{256});  // never dereferenced
  int* some_out = reinterpret_cast<int*>(std::uintptr_t{512});
  const std::size_t p = s.param;
  EXPECT_THROW(s.keys(nullptr, 10, some_out, p, nullptr), std::invalid_argument) << "null in, n > 0";
  EXPECT_THROW(s.keys(some_in, 10, nullptr, p, nullptr), std::invalid_argument) << "null out, n > 0";
  try {
    s.keys(some_in, s.max_n + 1, some_out, p, nullptr);
    ADD_FAILURE() << "[" << s.exercise << "] n = max + 1 did not throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(std::to_string(s.max_n)), std::string::npos)
        << "the message names the limit: " << e.what();
  }
  if (!s.in_place)
    EXPECT_THROW(s.keys(some_in, 10, const_cast<int*>(some_in), p, nullptr), std::invalid_argument) << "out == in";
  if (s.kind == Kind::Segments) {
    for (const std::size_t bad : {std::size_t{0}, std::size_t{3}, std::size_t{100}, s.max_param + 1,
                                  2 * s.max_param}) {
      EXPECT_THROW(s.keys(some_in, 10, some_out, bad, nullptr), std::invalid_argument) << "segment = " << bad;
      EXPECT_THROW(s.keys(some_in, 0, some_out, bad, nullptr), std::invalid_argument)
          << "segment = " << bad << " with n = 0 (check the arguments before the n = 0 shortcut)";
    }
  }
  if (s.kind == Kind::Merge) {
    EXPECT_THROW(s.keys(some_in, 10, some_out, 0, nullptr), std::invalid_argument) << "run = 0";
    EXPECT_THROW(s.keys(some_in, 0, some_out, 0, nullptr), std::invalid_argument) << "run = 0 with n = 0";
  }
  if (s.pairs) {
    int* other = reinterpret_cast<int*>(std::uintptr_t{1024});
    EXPECT_THROW(s.pairs(some_in, nullptr, 10, some_out, other, p, nullptr), std::invalid_argument)
        << "null values_in";
    EXPECT_THROW(s.pairs(some_in, some_in, 10, some_out, nullptr, p, nullptr), std::invalid_argument)
        << "null values_out";
    EXPECT_THROW(s.pairs(nullptr, some_in, 10, some_out, other, p, nullptr), std::invalid_argument)
        << "null keys_in";
  }
}

/// On the GPU: a rejected call leaves the output as it was.
inline void bad_input_changes_nothing(const Spec& s) {
  DeviceBuffer<int> in(4), out(4);
  out.fill_bytes(kPoison);
  EXPECT_THROW(s.keys(nullptr, 4, out.data(), s.param, nullptr), std::invalid_argument);
  EXPECT_THROW(s.keys(in.data(), s.max_n + 1, out.data(), s.param, nullptr), std::invalid_argument);
  if (s.kind == Kind::Segments)
    EXPECT_THROW(s.keys(in.data(), 4, out.data(), 3, nullptr), std::invalid_argument);
  if (s.kind == Kind::Merge) EXPECT_THROW(s.keys(in.data(), 4, out.data(), 0, nullptr), std::invalid_argument);
  CUDALAB_CHECK(cudaDeviceSynchronize());
  for (const int x : out.download())
    EXPECT_EQ(kPoisonInt, x) << "[" << s.exercise << "] a call that threw wrote to the output";
}

/// The Spec of a segment sort (2.1, 2.2), tested by size at its largest segment.
inline Spec segments(const char* exercise, void (*fn)(const int*, std::size_t, int*, std::size_t, cudaStream_t),
                     std::size_t max_segment) {
  std::vector<std::size_t> params;
  for (std::size_t p = 1; p <= max_segment; p *= 2) params.push_back(p);
  return Spec{exercise, Kind::Segments, fn, {}, max_segment, params, max_segment, true,
              cudalab::sort::max_elements};
}

/// The Spec of a whole-array sort (2.3, 2.7); `pairs` may be null.
inline Spec whole(const char* exercise, void (*fn)(const int*, std::size_t, int*, cudaStream_t),
                  void (*pairs)(const int*, const int*, std::size_t, int*, int*, cudaStream_t), std::size_t max_n) {
  PairsFn p;
  if (pairs != nullptr)
    p = [pairs](const int* ki, const int* vi, std::size_t n, int* ko, int* vo, std::size_t, cudaStream_t st) {
      pairs(ki, vi, n, ko, vo, st);
    };
  return Spec{exercise, Kind::Whole,
              [fn](const int* in, std::size_t n, int* out, std::size_t, cudaStream_t st) { fn(in, n, out, st); },
              p, 0, {}, 0, true, max_n};
}

/// The Spec of a merge of runs (2.4 to 2.6), tested by size at run `run`.
inline Spec merge(const char* exercise, void (*fn)(const int*, std::size_t, int*, std::size_t, cudaStream_t),
                  void (*pairs)(const int*, const int*, std::size_t, int*, int*, std::size_t, cudaStream_t),
                  std::size_t run, std::vector<std::size_t> runs) {
  return Spec{exercise, Kind::Merge, fn, pairs, run, std::move(runs), 0, false, cudalab::sort::max_elements};
}

}  // namespace cudalab::test::sort

/// Defines the suites Suite (random keys by size), Suite##Cases (patterns,
/// every segment or run, n = 0, repeated runs, bad input on the GPU) and
/// Suite##BadInput (host only) for `spec_expr`. The cases that apply to some
/// exercises only are added by CUDALAB_SORT_TEST_STABILITY (pairs overloads)
/// and CUDALAB_SORT_TEST_IN_PLACE (out == in allowed), so no test is skipped.
#define CUDALAB_SORT_TEST_SUITES(Suite, spec_expr)                                                  \
  namespace {                                                                                       \
  const ::cudalab::test::sort::Spec& Suite##Spec() {                                                \
    static const ::cudalab::test::sort::Spec spec = spec_expr;                                      \
    return spec;                                                                                    \
  }                                                                                                 \
  class Suite : public ::cudalab::test::GpuTestWithParam<std::size_t> {};                           \
  TEST_P(Suite, RandomKeys) { ::cudalab::test::sort::random_by_size(Suite##Spec(), GetParam()); }   \
  INSTANTIATE_TEST_SUITE_P(Sizes, Suite, ::testing::ValuesIn(::cudalab::test::sort::kSizes),        \
                           ::cudalab::test::sort::size_name);                                       \
  class Suite##Cases : public ::cudalab::test::GpuTest {};                                          \
  TEST_F(Suite##Cases, Patterns) { ::cudalab::test::sort::patterns(Suite##Spec()); }                 \
  TEST_F(Suite##Cases, EverySegmentOrRun) { ::cudalab::test::sort::every_param(Suite##Spec()); }     \
  TEST_F(Suite##Cases, ZeroWritesNothing) { ::cudalab::test::sort::zero_writes_nothing(Suite##Spec()); } \
  TEST_F(Suite##Cases, RepeatedRuns) { ::cudalab::test::sort::repeated_runs(Suite##Spec()); }        \
  TEST_F(Suite##Cases, BadInputChangesNothing) {                                                    \
    ::cudalab::test::sort::bad_input_changes_nothing(Suite##Spec());                                \
  }                                                                                                 \
  TEST(Suite##BadInput, Throws) { ::cudalab::test::sort::bad_input_throws(Suite##Spec()); }          \
  }  // namespace

/// Suite##Cases.Stability: key-value pairs on ties of every kind (exercises
/// with a pairs overload: 2.4 to 2.7). After CUDALAB_SORT_TEST_SUITES(Suite, ...).
#define CUDALAB_SORT_TEST_STABILITY(Suite)                                                          \
  namespace {                                                                                       \
  TEST_F(Suite##Cases, Stability) { ::cudalab::test::sort::stability(Suite##Spec()); }              \
  }  // namespace

/// Suite##Cases.InPlace: out == in (exercises that allow it: 2.1, 2.2, 2.3,
/// 2.7). After CUDALAB_SORT_TEST_SUITES(Suite, ...).
#define CUDALAB_SORT_TEST_IN_PLACE(Suite)                                                           \
  namespace {                                                                                       \
  TEST_F(Suite##Cases, InPlace) { ::cudalab::test::sort::in_place(Suite##Spec()); }                 \
  }  // namespace
