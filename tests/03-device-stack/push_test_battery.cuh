// The test battery shared by exercises 3.1 and 3.2: both pushes have the same
// contract (cudalab/stack.cuh), so each exercise's test file instantiates
// this battery with its own suite name, exercise id and function.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "stack_test_util.cuh"

namespace cudalab::test::stack {

using PushFn = void (*)(DeviceStack<int>, const int*, const std::uint8_t*, std::size_t, cudaStream_t);

/// Items in [-2^30, 2^30]: never the poison 0xA5A5A5A5.
inline std::vector<int> push_items(std::size_t n, std::uint64_t s) {
  return gen::uniform_int<int>(n, s, -(1 << 30), 1 << 30);
}

/// Pushes `items` (with `flags`; empty = null flags) into `stack`, which
/// already holds `before` (bottom first, counter = before.size()) and the
/// error bits `flags_before` (an earlier call's), and checks the counter,
/// the flags, the contents and the guards.
inline void check_push(const char* exercise, PushFn fn, GuardedStack& stack, const std::vector<int>& before,
                       const std::vector<int>& items, const std::vector<std::uint8_t>& flags, std::uint64_t s,
                       const std::string& what, unsigned flags_before = 0) {
  const std::size_t n = items.size();
  const std::size_t capacity = stack.view().capacity;
  const auto d_items = to_device(items);
  const auto d_flags = to_device(flags);
  fn(stack.view(), n ? d_items.data() : nullptr, flags.empty() ? nullptr : d_flags.data(), n, nullptr);
  CUDALAB_CHECK(cudaDeviceSynchronize());

  const std::vector<int> pushed = reference::pushed_items(items, flags);
  std::vector<int> expected = before;
  expected.insert(expected.end(), pushed.begin(), pushed.end());
  const auto attempts = static_cast<long long>(expected.size());
  const bool overflow = expected.size() > capacity;
  const std::size_t size = overflow ? capacity : expected.size();
  const std::string ctx = context(exercise, n, s) + what + ", capacity " + std::to_string(capacity) + ", " +
                          std::to_string(pushed.size()) + " pushes onto " + std::to_string(before.size()) +
                          " items: ";

  ASSERT_EQ(stack.guard_ok_or_message(), "") << ctx << "a write outside [0, capacity): "
                                             << "check 0 <= slot < capacity before writing";
  ASSERT_EQ(attempts, stack.counter()) << ctx << "the counter must count every push, also those that "
                                       << "overflow (one increment per pushing thread, none for the others)";
  ASSERT_EQ((overflow ? cudalab::stack::kOverflow : 0u) | flags_before, stack.flags())
      << ctx
      << flags_advice(flags_before, "kOverflow", "push",
                      overflow ? "pushes past the capacity must set kOverflow"
                               : "no push overflowed, yet a flag is set (or the overflow bit is missing)");
  const std::vector<int> slots = stack.slots().download();
  const std::vector<int> stored(slots.begin(), slots.begin() + static_cast<std::ptrdiff_t>(size));
  if (!overflow) {
    const std::string diff = multiset_difference(expected, stored);
    ASSERT_EQ(diff, "") << ctx << "the stack must hold the old items plus every pushed item exactly once";
    for (std::size_t k = size; k < capacity; ++k)
      ASSERT_EQ(kPoisonInt, slots[k]) << ctx << "slot " << k << " above the top (" << size
                                      << ") was written: " << slots[k];
  } else {
    const std::string diff = not_a_submultiset(expected, stored);
    ASSERT_EQ(diff, "") << ctx << "after an overflow every slot must hold a pushed item, each at most once";
    // A push writes only the slot it reserved, at or above the counter it found: the items held
    // before the call stay in slots [0, before.size()).
    if (before.size() <= capacity) {
      const std::vector<int> kept(slots.begin(), slots.begin() + static_cast<std::ptrdiff_t>(before.size()));
      ASSERT_EQ(multiset_difference(before, kept), "")
          << ctx << "the " << before.size() << " items held before the call must stay in slots [0, "
          << before.size() << "): an overflowing push drops its item, it never writes below its reservation";
    }
  }
}


/// Every thread pushes into a stack of capacity n: all fit.
inline void every_lane(const char* exercise, PushFn fn, std::size_t n) {
  CUDALAB_SKIP_IF_ABOVE_MAX_N(n);
  const auto s = seed();
  GuardedStack stack(n);
  check_push(exercise, fn, stack, {}, push_items(n, s), {}, s, "every thread pushes (null flags)");
}

/// A random half of the threads push (explicit flags, some all-zero warps).
inline void random_half(const char* exercise, PushFn fn, std::size_t n) {
  CUDALAB_SKIP_IF_ABOVE_MAX_N(n);
  const auto s = seed();
  GuardedStack stack(n);
  check_push(exercise, fn, stack, {}, push_items(n, s), random_flags(n, s, 512), s,
             "a random half of the threads push");
}

/// Only lane 0 of each warp pushes (1/32 of the threads).
inline void one_lane_per_warp(const char* exercise, PushFn fn, std::size_t n) {
  CUDALAB_SKIP_IF_ABOVE_MAX_N(n);
  const auto s = seed();
  GuardedStack stack(n / 32 + 1);
  check_push(exercise, fn, stack, {}, push_items(n, s), lane_flags(n, 0), s, "only lane 0 of each warp pushes");
}

/// Every thread pushes into a stack of capacity n / 2: the rest overflow.
inline void overflow_half(const char* exercise, PushFn fn, std::size_t n) {
  CUDALAB_SKIP_IF_ABOVE_MAX_N(n);
  const auto s = seed();
  GuardedStack stack(n / 2);
  check_push(exercise, fn, stack, {}, push_items(n, s), {}, s, "every thread pushes, capacity n / 2");
}

/// Capacity 0 and 1, including the exact fit and the overflow of each.
inline void tiny_capacities(const char* exercise, PushFn fn) {
  const auto s = seed();
  for (const std::size_t capacity : {std::size_t{0}, std::size_t{1}}) {
    for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{33}, std::size_t{5000}}) {
      GuardedStack stack(capacity);
      check_push(exercise, fn, stack, {}, push_items(n, s + n), {}, s,
                 "capacity " + std::to_string(capacity) + ", n " + std::to_string(n));
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

/// Lane 31 only, one thread of the whole grid, and no thread at all.
inline void sparse_patterns(const char* exercise, PushFn fn) {
  const auto s = seed();
  const std::size_t n = (1u << 20) + 7;
  const auto items = push_items(n, s);
  {
    GuardedStack stack(n);
    check_push(exercise, fn, stack, {}, items, lane_flags(n, 31), s, "only lane 31 of each warp pushes");
  }
  if (::testing::Test::HasFatalFailure()) return;
  {
    std::vector<std::uint8_t> last(n, 0);
    last[n - 1] = 1;
    GuardedStack stack(1);
    check_push(exercise, fn, stack, {}, items, last, s, "only the last thread of the grid pushes");
  }
  if (::testing::Test::HasFatalFailure()) return;
  {
    GuardedStack stack(4);
    check_push(exercise, fn, stack, {}, items, std::vector<std::uint8_t>(n, 0), s, "no thread pushes");
  }
}

/// Two launches onto one stack: the second adds to the first; then a third overflows.
inline void launches_accumulate(const char* exercise, PushFn fn) {
  const auto s = seed();
  const std::size_t n = 100003;
  GuardedStack stack(2 * n + 10);
  const auto a = push_items(n, s);
  const auto b = push_items(n, s + 1);
  check_push(exercise, fn, stack, {}, a, {}, s, "first launch");
  if (::testing::Test::HasFatalFailure()) return;
  check_push(exercise, fn, stack, a, b, random_flags(n, s, 1000), s, "second launch onto the first");
  if (::testing::Test::HasFatalFailure()) return;
  std::vector<int> both = a;
  const auto b_pushed = reference::pushed_items(b, random_flags(n, s, 1000));
  both.insert(both.end(), b_pushed.begin(), b_pushed.end());
  // 37 more pushes than the free slots (the stack holds n + about 0.98 n of
  // 2n + 10): the last launch fills the stack and overflows onto the items of
  // the earlier ones, which must stay.
  const std::size_t free_slots = 2 * n + 10 - both.size();
  check_push(exercise, fn, stack, both, push_items(free_slots + 37, s + 2), {}, s, "third launch overflows");
}

/// A stack whose kUnderflow an earlier pop set: a push that overflows adds
/// kOverflow to it, one that fits leaves it (the flags stay set until clear()).
inline void flags_are_sticky(const char* exercise, PushFn fn) {
  const auto s = seed();
  const auto items = push_items(20, s);
  for (const std::size_t capacity : {std::size_t{8}, std::size_t{64}}) {
    GuardedStack stack(capacity);
    stack.set_flags(cudalab::stack::kUnderflow);
    check_push(exercise, fn, stack, {}, items, {}, s,
               "kUnderflow set by an earlier pop, 20 pushes into " + std::to_string(capacity) + " slots",
               cudalab::stack::kUnderflow);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

/// Pushes onto a stack that underflowed: the counter is -3 and kUnderflow is
/// set. The first three slots handed out (-3, -2, -1) lie outside
/// [0, capacity): those pushes drop their items and set kOverflow; the other
/// seven fill slots 0 to 6.
inline void push_after_underflow(const char* exercise, PushFn fn) {
  const auto s = seed();
  const std::vector<int> items = push_items(10, s);
  GuardedStack stack(16);
  stack.set_counter(-3);
  stack.set_flags(cudalab::stack::kUnderflow);
  const auto d_items = to_device(items);
  fn(stack.view(), d_items.data(), nullptr, items.size(), nullptr);
  CUDALAB_CHECK(cudaDeviceSynchronize());
  const std::string ctx = context(exercise, items.size(), s) +
                          "10 pushes onto a stack of 16 whose counter is -3 after an underflow: ";
  ASSERT_EQ(stack.guard_ok_or_message(), "")
      << ctx << "a write outside [0, capacity): the slots -3, -2 and -1 are outside too, check 0 <= slot "
      << "(a signed slot) as well as slot < capacity";
  ASSERT_EQ(7, stack.counter()) << ctx << "the counter must count every push: -3 + 10 = 7";
  ASSERT_EQ(cudalab::stack::kOverflow | cudalab::stack::kUnderflow, stack.flags())
      << ctx << "the pushes given slots -3, -2 and -1 must set kOverflow, and kUnderflow stays set until clear()";
  const std::vector<int> slots = stack.slots().download();
  const std::vector<int> stored(slots.begin(), slots.begin() + 7);
  ASSERT_EQ(not_a_submultiset(items, stored), "")
      << ctx << "slots 0 to 6 must hold seven of the pushed items, each at most once";
  for (std::size_t k = 7; k < slots.size(); ++k)
    ASSERT_EQ(kPoisonInt, slots[k]) << ctx << "slot " << k << " above the top (7) was written: " << slots[k];
}

/// Pushes onto a stack whose counter is 2^32 + 2, past the capacity of 16
/// after many dropped pushes: every slot handed out is above the capacity,
/// so nothing is written. A slot kept in 32 bits wraps to 2..6 and writes.
inline void push_counter_beyond_32_bits(const char* exercise, PushFn fn) {
  const auto s = seed();
  const std::vector<int> items = push_items(5, s);
  const long long start = (1LL << 32) + 2;
  GuardedStack stack(16);
  stack.set_counter(start);
  const auto d_items = to_device(items);
  fn(stack.view(), d_items.data(), nullptr, items.size(), nullptr);
  CUDALAB_CHECK(cudaDeviceSynchronize());
  const std::string ctx = context(exercise, items.size(), s) +
                          "5 pushes onto a stack of 16 whose counter is 2^32 + 2 (64-bit, it keeps counting): ";
  ASSERT_EQ(stack.guard_ok_or_message(), "") << ctx << "a write outside [0, capacity)";
  ASSERT_EQ(start + 5, stack.counter()) << ctx << "the counter must count every push";
  ASSERT_EQ(cudalab::stack::kOverflow, stack.flags()) << ctx << "every push got a slot past the capacity: kOverflow";
  const std::vector<int> slots = stack.slots().download();
  for (std::size_t k = 0; k < slots.size(); ++k)
    ASSERT_EQ(kPoisonInt, slots[k]) << ctx << "slot " << k << " was written with " << slots[k]
                                    << ": a slot kept in 32 bits (int, unsigned) wraps; keep it in long long";
}

/// Large sizes, five times each, exact fit and overflow: races show as rare failures.
inline void repeated_large(const char* exercise, PushFn fn) {
  const std::size_t n = (1u << 22) + 1;
  CUDALAB_SKIP_IF_ABOVE_MAX_N(n);
  const auto s = seed();
  const auto items = push_items(n, s);
  for (int rep = 0; rep < 5; ++rep) {
    for (const std::size_t capacity : {n, n - 777}) {
      GuardedStack stack(capacity);
      check_push(exercise, fn, stack, {}, items, rep % 2 ? random_flags(n, s + rep, 900) : std::vector<std::uint8_t>{},
                 s, "repetition " + std::to_string(rep));
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

/// Bad arguments throw std::invalid_argument before any CUDA call: no GPU needed.
inline void bad_input_throws(PushFn fn) {
  int* some = reinterpret_cast<int*>(std::uintptr_t{256});  // never dereferenced
  auto* some_count = reinterpret_cast<long long*>(std::uintptr_t{512});
  auto* some_errors = reinterpret_cast<unsigned*>(std::uintptr_t{768});
  const DeviceStack<int> good{some, 10, some_count, some_errors};
  EXPECT_THROW(fn({nullptr, 10, some_count, some_errors}, some, nullptr, 1, nullptr), std::invalid_argument)
      << "null storage with capacity > 0";
  EXPECT_THROW(fn({some, 10, nullptr, some_errors}, some, nullptr, 1, nullptr), std::invalid_argument)
      << "null counter";
  EXPECT_THROW(fn({some, 10, some_count, nullptr}, some, nullptr, 1, nullptr), std::invalid_argument)
      << "null error word";
  EXPECT_THROW(fn(good, nullptr, nullptr, 1, nullptr), std::invalid_argument) << "null items, n > 0";
  EXPECT_THROW(fn(good, some, nullptr, cudalab::stack::max_items + 1, nullptr), std::invalid_argument)
      << "n above max_items";
}

/// On the GPU: a rejected call changes neither the counter nor the slots.
inline void bad_input_changes_nothing(const char* exercise, PushFn fn) {
  GuardedStack stack(8);
  EXPECT_THROW(fn(stack.view(), nullptr, nullptr, 4, nullptr), std::invalid_argument);
  EXPECT_THROW(fn(stack.view(), stack.slots().data(), nullptr, cudalab::stack::max_items + 1, nullptr),
               std::invalid_argument);
  CUDALAB_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(0, stack.counter()) << "[" << exercise << "] a call that threw changed the counter";
  EXPECT_EQ(0u, stack.flags()) << "[" << exercise << "] a call that threw set a flag";
  EXPECT_EQ(std::vector<int>(8, kPoisonInt), stack.slots().download())
      << "[" << exercise << "] a call that threw wrote a slot";
}

}  // namespace cudalab::test::stack

/// Defines the suites Suite (by size), Suite##Cases (fixed cases on the GPU)
/// and Suite##BadInput (host only) for the push `function` of `exercise`.
#define CUDALAB_PUSH_TEST_SUITES(Suite, exercise, function)                                        \
  namespace {                                                                                       \
  constexpr auto Suite##Fn = static_cast<::cudalab::test::stack::PushFn>(&function);                \
  class Suite : public ::cudalab::test::GpuTestWithParam<std::size_t> {};                           \
  TEST_P(Suite, EveryLanePushes) { ::cudalab::test::stack::every_lane(exercise, Suite##Fn, GetParam()); } \
  TEST_P(Suite, RandomHalfPush) { ::cudalab::test::stack::random_half(exercise, Suite##Fn, GetParam()); } \
  TEST_P(Suite, OneLanePerWarp) {                                                                   \
    ::cudalab::test::stack::one_lane_per_warp(exercise, Suite##Fn, GetParam());                     \
  }                                                                                                 \
  TEST_P(Suite, OverflowHalf) { ::cudalab::test::stack::overflow_half(exercise, Suite##Fn, GetParam()); } \
  INSTANTIATE_TEST_SUITE_P(Sizes, Suite, ::testing::ValuesIn(::cudalab::test::stack::kSizes),       \
                           ::cudalab::test::stack::size_name);                                      \
  class Suite##Cases : public ::cudalab::test::GpuTest {};                                          \
  TEST_F(Suite##Cases, TinyCapacities) { ::cudalab::test::stack::tiny_capacities(exercise, Suite##Fn); } \
  TEST_F(Suite##Cases, SparsePatterns) { ::cudalab::test::stack::sparse_patterns(exercise, Suite##Fn); } \
  TEST_F(Suite##Cases, LaunchesAccumulate) {                                                        \
    ::cudalab::test::stack::launches_accumulate(exercise, Suite##Fn);                               \
  }                                                                                                 \
  TEST_F(Suite##Cases, RepeatedLarge) { ::cudalab::test::stack::repeated_large(exercise, Suite##Fn); } \
  TEST_F(Suite##Cases, FlagsAreSticky) { ::cudalab::test::stack::flags_are_sticky(exercise, Suite##Fn); } \
  TEST_F(Suite##Cases, CounterBeyond32Bits) {                                                       \
    ::cudalab::test::stack::push_counter_beyond_32_bits(exercise, Suite##Fn);                       \
  }                                                                                                 \
  TEST_F(Suite##Cases, PushAfterUnderflow) {                                                        \
    ::cudalab::test::stack::push_after_underflow(exercise, Suite##Fn);                              \
  }                                                                                                 \
  TEST_F(Suite##Cases, BadInputChangesNothing) {                                                    \
    ::cudalab::test::stack::bad_input_changes_nothing(exercise, Suite##Fn);                         \
  }                                                                                                 \
  TEST(Suite##BadInput, Throws) { ::cudalab::test::stack::bad_input_throws(Suite##Fn); }            \
  }  // namespace
