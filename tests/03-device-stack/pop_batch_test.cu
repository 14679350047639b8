// Tests of exercise 3.3, cudalab::stack::pop_batch (suites StackPopBatch*).
// The stack is filled from the host (slot k holds 3k + 1), so these tests do
// not depend on your push. Run: tools/grade 3.3   or   build/default/bin/pop_batch_test_starter
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "stack_test_util.cuh"

namespace {

using namespace cudalab::test::stack;
constexpr const char* kExercise = "3.3 pop_batch";
constexpr int kEmpty = -1;
constexpr unsigned kBlock = cudalab::stack::pop_batch_block;

int item_of_slot(long long k) { return static_cast<int>(3 * k + 1); }

// Fills slots [0, fill) of a stack of `capacity`, sets the counter to
// `counter`, pops `count` and checks everything the contract promises.
// `flags_before`: the error bits an earlier call left, which must stay set.
void check_pop(std::size_t capacity, std::size_t fill, long long counter, std::size_t count, const std::string& what,
               unsigned flags_before = 0) {
  const auto s = cudalab::test::seed();
  GuardedStack stack(capacity);
  std::vector<int> contents(fill);
  for (std::size_t k = 0; k < fill; ++k) contents[k] = item_of_slot(static_cast<long long>(k));
  stack.slots().upload(contents);
  stack.set_counter(counter);
  stack.set_flags(flags_before);
  GuardedArray out(count);
  cudalab::stack::pop_batch(stack.view(), count, out.data(), kEmpty, nullptr);
  CUDALAB_CHECK(cudaDeviceSynchronize());

  const std::string ctx = cudalab::test::context(kExercise, count, s) + what + " (capacity " +
                          std::to_string(capacity) + ", counter before " + std::to_string(counter) + "): ";
  ASSERT_EQ(out.guard_damage(), "") << ctx << "write outside out[0 .. count)";
  ASSERT_EQ(stack.guard_ok_or_message(), "") << ctx << "write around the stack's slots";
  std::vector<int> expected_slots_content = stack.slots().download();
  for (std::size_t k = 0; k < fill; ++k)
    ASSERT_EQ(contents[k], expected_slots_content[k]) << ctx << "pop must not modify slot " << k;
  ASSERT_EQ(counter - static_cast<long long>(count), stack.counter())
      << ctx << "the counter must drop by exactly count (one fetch_sub of k per block), even below 0";

  // The slots popped: [counter - count, counter) intersected with [0, capacity).
  std::vector<int> expected;
  for (long long k = counter - static_cast<long long>(count); k < counter; ++k)
    if (k >= 0 && static_cast<unsigned long long>(k) < capacity) expected.push_back(item_of_slot(k));
  const bool underflow = expected.size() < count;
  ASSERT_EQ((underflow ? cudalab::stack::kUnderflow : 0u) | flags_before, stack.flags())
      << ctx
      << flags_advice(flags_before, "kUnderflow", "pop",
                      underflow ? "some pops found no item: kUnderflow must be set"
                                : "every pop found an item, yet a flag is set");

  const std::vector<int> got = out.download();
  std::vector<int> items;
  for (const int v : got)
    if (v != kEmpty) items.push_back(v);
  ASSERT_EQ(multiset_difference(expected, items), "")
      << ctx << "the outputs other than `empty` must be exactly the items of the popped slots "
      << "(unwritten outputs read 0xA5A5A5A5 = " << kPoisonInt << ")";
  // Order: within each block's run, thread t takes slot top - 1 - t for the
  // block's top; the outputs whose slot is outside [0, capacity) are `empty`.
  for (std::size_t first = 0; first < count; first += kBlock) {
    const std::size_t last = std::min(count, first + kBlock);
    std::size_t known = first;
    while (known < last && got[known] == kEmpty) ++known;
    if (known == last) continue;  // all empty: the multiset check above covers it
    const long long top = (got[known] - 1) / 3 + 1 + static_cast<long long>(known - first);
    for (std::size_t i = first; i < last; ++i) {
      const long long slot = top - 1 - static_cast<long long>(i - first);
      const bool valid = slot >= 0 && static_cast<unsigned long long>(slot) < capacity;
      ASSERT_EQ(valid ? item_of_slot(slot) : kEmpty, got[i])
          << ctx << "out[" << i << "]: out[" << known << "] = " << got[known] << " (slot " << (got[known] - 1) / 3
          << ") puts this block's top at " << top << ", so thread " << i - first << " must take slot " << slot
          << (valid ? "" : ", which holds no item (write `empty`)")
          << ". Thread t of a block takes slot top - 1 - t.";
    }
  }
}

class StackPopBatch : public cudalab::test::GpuTestWithParam<std::size_t> {};

TEST_P(StackPopBatch, ExactlyAll) {
  CUDALAB_SKIP_IF_ABOVE_MAX_N(GetParam());
  const std::size_t n = GetParam();
  check_pop(n, n, static_cast<long long>(n), n, "pop every item");
}

TEST_P(StackPopBatch, HalfOfTwice) {
  CUDALAB_SKIP_IF_ABOVE_MAX_N(2 * GetParam());
  const std::size_t n = GetParam();
  check_pop(2 * n + 5, 2 * n + 5, static_cast<long long>(2 * n + 5), n, "pop n of 2n + 5 items");
}

TEST_P(StackPopBatch, Underflow) {
  CUDALAB_SKIP_IF_ABOVE_MAX_N(GetParam());
  const std::size_t n = GetParam();
  check_pop(n + 10, n / 3, static_cast<long long>(n / 3), n, "pop n from a stack of n / 3 items");
}

INSTANTIATE_TEST_SUITE_P(Sizes, StackPopBatch, ::testing::ValuesIn(kSizes), size_name);

class StackPopBatchCases : public cudalab::test::GpuTest {};

TEST_F(StackPopBatchCases, CapacityZeroAndOne) {
  for (const std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{300}}) {
    check_pop(0, 0, 0, count, "capacity 0");
    if (HasFatalFailure()) return;
    check_pop(1, 1, 1, count, "capacity 1, one item");
    if (HasFatalFailure()) return;
    check_pop(1, 0, 0, count, "capacity 1, empty");
    if (HasFatalFailure()) return;
  }
}

TEST_F(StackPopBatchCases, EmptyStack) { check_pop(1000, 0, 0, 777, "pop from an empty stack"); }

TEST_F(StackPopBatchCases, AlreadyUnderflowed) {
  check_pop(1000, 1000, -5, 300, "counter already negative after an earlier underflow");
}

TEST_F(StackPopBatchCases, AfterOverflow) {
  // Counter 1000 + 40 on a stack of 1000: the 40 topmost pops find the slots
  // of dropped pushes (no item there), the next ones find items.
  check_pop(1000, 1000, 1040, 300, "counter above capacity after an overflow");
}

TEST_F(StackPopBatchCases, CounterBeyond32Bits) {
  // 2^32 + 5 on a full stack of 16 (the counter keeps counting dropped
  // pushes): the slots popped lie far above the capacity, so every output is
  // `empty`; a slot kept in 32 bits wraps to 4..1 and returns items.
  check_pop(16, 16, (1LL << 32) + 5, 4, "counter 2^32 + 5, past the capacity (a 32-bit slot wraps into it)");
}

TEST_F(StackPopBatchCases, FlagsAreSticky) {
  // kOverflow left by the pushes that overflowed: the pops that find no item
  // add kUnderflow to it, and pops that all find items keep it.
  check_pop(1000, 1000, 1040, 300, "kOverflow set by the pushes that overflowed", cudalab::stack::kOverflow);
  if (HasFatalFailure()) return;
  check_pop(1000, 1000, 1000, 300, "kOverflow set by an earlier push, every pop finds an item",
            cudalab::stack::kOverflow);
}

TEST_F(StackPopBatchCases, SuccessiveBatches) {
  const std::size_t n = 100000;
  GuardedStack stack(n);
  std::vector<int> contents(n);
  for (std::size_t k = 0; k < n; ++k) contents[k] = item_of_slot(static_cast<long long>(k));
  stack.slots().upload(contents);
  stack.set_counter(static_cast<long long>(n));
  std::vector<int> all;
  for (const std::size_t batch : {std::size_t{1}, std::size_t{255}, std::size_t{4096}, std::size_t{95648}}) {
    GuardedArray out(batch);
    cudalab::stack::pop_batch(stack.view(), batch, out.data(), kEmpty, nullptr);
    const auto got = out.download();
    all.insert(all.end(), got.begin(), got.end());
  }
  ASSERT_EQ(0, stack.counter()) << cudalab::test::context(kExercise, n, 0) << "four batches popped every item";
  ASSERT_EQ(multiset_difference(contents, all), "")
      << cudalab::test::context(kExercise, n, 0) << "four batches must pop every item exactly once";
}

TEST_F(StackPopBatchCases, RepeatedLarge) {
  const std::size_t n = (1u << 22) + 3;
  CUDALAB_SKIP_IF_ABOVE_MAX_N(n);
  for (int rep = 0; rep < 3; ++rep) {
    check_pop(n, n, static_cast<long long>(n) - 1000 * rep, n - 333, "repetition " + std::to_string(rep));
    if (HasFatalFailure()) return;
  }
}

TEST_F(StackPopBatchCases, BadInputChangesNothing) {
  GuardedStack stack(8);
  stack.set_counter(8);
  EXPECT_THROW(cudalab::stack::pop_batch(stack.view(), 4, nullptr, kEmpty, nullptr), std::invalid_argument);
  CUDALAB_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(8, stack.counter()) << "[" << kExercise << "] a call that threw changed the counter";
}

TEST(StackPopBatchBadInput, Throws) {
  int* some = reinterpret_cast<int*>(std::uintptr_t{256});
  auto* some_count = reinterpret_cast<long long*>(std::uintptr_t{512});
  auto* some_errors = reinterpret_cast<unsigned*>(std::uintptr_t{768});
  const cudalab::stack::DeviceStack<int> good{some, 10, some_count, some_errors};
  EXPECT_THROW(cudalab::stack::pop_batch({nullptr, 10, some_count, some_errors}, 1, some, kEmpty, nullptr),
               std::invalid_argument) << "null storage with capacity > 0";
  EXPECT_THROW(cudalab::stack::pop_batch({some, 10, nullptr, some_errors}, 1, some, kEmpty, nullptr),
               std::invalid_argument) << "null counter";
  EXPECT_THROW(cudalab::stack::pop_batch({some, 10, some_count, nullptr}, 1, some, kEmpty, nullptr),
               std::invalid_argument) << "null error word";
  EXPECT_THROW(cudalab::stack::pop_batch(good, 1, nullptr, kEmpty, nullptr), std::invalid_argument)
      << "null out, count > 0";
  EXPECT_THROW(cudalab::stack::pop_batch(good, cudalab::stack::max_items + 1, some, kEmpty, nullptr),
               std::invalid_argument) << "count above max_items";
}

}  // namespace
