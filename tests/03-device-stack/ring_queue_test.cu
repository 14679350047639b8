// Tests of exercise 3.5, cudalab::stack::ring_queue_enqueue and
// ring_queue_dequeue (suites StackRingQueue*): full and empty behaviour,
// exact counters, FIFO order between launches, wrap-around of the slots and
// of 32 bits. Run: tools/grade 3.5   or   build/default/bin/ring_queue_test_starter
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <deque>
#include <iterator>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "stack_test_util.cuh"

namespace {

using namespace cudalab::test::stack;
using cudalab::stack::kOverflow;
using cudalab::stack::kUnderflow;
constexpr const char* kExercise = "3.5 ring_queue";
constexpr int kEmpty = -1;
constexpr unsigned long long kNear32 = (1ull << 32) - 300;  // head and tail cross 2^32 during the tests

std::vector<int> queue_items(std::size_t n, std::uint64_t s) { return cudalab::gen::uniform_int<int>(n, s, 0, 1 << 30); }

void enqueue(GuardedQueue& q, const std::vector<int>& items, const std::vector<std::uint8_t>& flags = {}) {
  const auto d_items = to_device(items);
  const auto d_flags = to_device(flags);
  cudalab::stack::ring_queue_enqueue(q.view(), items.empty() ? nullptr : d_items.data(),
                                     flags.empty() ? nullptr : d_flags.data(), items.size(), nullptr);
  CUDALAB_CHECK(cudaDeviceSynchronize());
}

// Dequeues `count`; returns all outputs (items and `empty`), after checking
// the guards of out.
std::vector<int> dequeue(GuardedQueue& q, std::size_t count) {
  GuardedArray out(count);
  cudalab::stack::ring_queue_dequeue(q.view(), count, out.data(), kEmpty, nullptr);
  CUDALAB_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(out.guard_damage(), "") << "[" << kExercise << "] dequeue wrote outside out[0 .. count)";
  return out.download();
}

std::vector<int> without_empty(const std::vector<int>& v) {
  std::vector<int> r;
  for (const int x : v)
    if (x != kEmpty) r.push_back(x);
  return r;
}

class StackRingQueue : public cudalab::test::GpuTestWithParam<std::size_t> {};

// Enqueue n into a queue of capacity n that starts just before 2^32 (so the
// slots wrap around), then dequeue n + 7: the n items, then 7 times `empty`.
TEST_P(StackRingQueue, FillThenDrain) {
  const std::size_t n = GetParam();
  CUDALAB_SKIP_IF_ABOVE_MAX_N(n);
  const auto s = cudalab::test::seed();
  const std::string ctx = cudalab::test::context(kExercise, n, s) + "capacity n, head = tail = 2^32 - 300: ";
  GuardedQueue q(n);
  q.reset_at(kNear32);
  const auto items = queue_items(n, s);
  enqueue(q, items);
  ASSERT_EQ(q.slots().guard_damage(), "") << ctx << "enqueue wrote outside the slots: index t % capacity";
  auto [h, t] = q.counters();
  ASSERT_EQ(kNear32, h) << ctx << "enqueue must not move head";
  ASSERT_EQ(kNear32 + n, t) << ctx << "tail must grow by the number of items stored (n; nothing was full)";
  ASSERT_EQ(0u, q.flags()) << ctx << "the queue had room for all n: no flag";
  const auto got = dequeue(q, n + 7);
  std::tie(h, t) = q.counters();
  ASSERT_EQ(kNear32 + n, h) << ctx << "after draining, head must equal tail: a failed dequeue must give its "
                                      "number back (fetch_sub)";
  ASSERT_EQ(kNear32 + n, t) << ctx << "dequeue must not move tail";
  ASSERT_EQ(kUnderflow, q.flags()) << ctx << "7 dequeues found the queue empty: kUnderflow, and only it";
  ASSERT_EQ(multiset_difference(items, without_empty(got)), "") << ctx << "dequeued items differ from enqueued";
  ASSERT_EQ(7, std::count(got.begin(), got.end(), kEmpty)) << ctx << "exactly 7 outputs must be `empty`";
}

// Enqueue n into a queue of capacity n / 2: exactly n / 2 are stored.
TEST_P(StackRingQueue, Full) {
  const std::size_t n = GetParam();
  CUDALAB_SKIP_IF_ABOVE_MAX_N(n);
  const auto s = cudalab::test::seed();
  const std::size_t capacity = n / 2;
  const std::string ctx = cudalab::test::context(kExercise, n, s) + "capacity n / 2 = " +
                          std::to_string(capacity) + ": ";
  GuardedQueue q(capacity);
  q.reset_at(kNear32 - capacity / 3);
  const auto items = queue_items(n, s);
  enqueue(q, items);
  ASSERT_EQ(q.slots().guard_damage(), "") << ctx << "enqueue wrote outside the slots";
  const auto [h, t] = q.counters();
  ASSERT_EQ(capacity, t - h) << ctx << "a full queue holds exactly capacity items (tail - head); failed "
                                       "enqueues must give their number back";
  ASSERT_EQ(n > capacity ? kOverflow : 0u, q.flags()) << ctx << "enqueues into a full queue set kOverflow";
  const auto got = dequeue(q, n);
  const auto stored = without_empty(got);
  ASSERT_EQ(capacity, stored.size()) << ctx << "draining must return exactly capacity items";
  ASSERT_EQ(not_a_submultiset(items, stored), "") << ctx << "every dequeued item must have been enqueued, once";
}

INSTANTIATE_TEST_SUITE_P(Sizes, StackRingQueue, ::testing::ValuesIn(kSizes), size_name);

class StackRingQueueCases : public cudalab::test::GpuTest {};

TEST_F(StackRingQueueCases, CapacityZero) {
  GuardedQueue q(0);
  enqueue(q, {1, 2, 3});
  EXPECT_EQ(q.slots().guard_damage(), "") << "[" << kExercise << "] capacity 0: nothing may be written";
  EXPECT_EQ(0u, q.counters().second) << "[" << kExercise << "] capacity 0: tail must stay 0";
  EXPECT_EQ(kOverflow, q.flags()) << "[" << kExercise << "] capacity 0: every enqueue finds it full";
  const auto got = dequeue(q, 5);
  EXPECT_EQ(std::vector<int>(5, kEmpty), got) << "[" << kExercise << "] capacity 0: every dequeue finds it empty";
  EXPECT_EQ(kOverflow | kUnderflow, q.flags());
  EXPECT_EQ(0u, q.counters().first) << "[" << kExercise << "] capacity 0: head must stay 0";
}

TEST_F(StackRingQueueCases, CapacityOne) {
  GuardedQueue q(1);
  q.reset_at(kNear32);
  for (int round = 0; round < 5; ++round) {
    enqueue(q, {10 + round, 20 + round, 30 + round});
    ASSERT_EQ(1u, q.counters().second - q.counters().first) << "[" << kExercise << "] capacity 1, round " << round;
    const auto got = dequeue(q, 2);
    const auto items = without_empty(got);
    ASSERT_EQ(1u, items.size()) << "[" << kExercise << "] capacity 1, round " << round << ": one item out";
    ASSERT_TRUE(items[0] == 10 + round || items[0] == 20 + round || items[0] == 30 + round)
        << "[" << kExercise << "] capacity 1, round " << round << ": got " << items[0];
    ASSERT_EQ(q.slots().guard_damage(), "") << "[" << kExercise << "] capacity 1";
  }
}

TEST_F(StackRingQueueCases, FifoBetweenLaunches) {
  const auto s = cudalab::test::seed();
  const std::size_t capacity = 10007;
  GuardedQueue q(capacity);
  q.reset_at(kNear32);
  const auto a = queue_items(4000, s);
  const auto b = queue_items(5000, s + 1);
  enqueue(q, a);
  enqueue(q, b);
  const auto first = dequeue(q, a.size());
  ASSERT_EQ(multiset_difference(a, first), "")
      << cudalab::test::context(kExercise, a.size(), s) << "the first dequeue after two enqueue launches must "
      << "return the first launch's items (FIFO): dequeue from head, enqueue at tail";
  const auto second = dequeue(q, b.size());
  ASSERT_EQ(multiset_difference(b, second), "") << cudalab::test::context(kExercise, b.size(), s)
                                                << "the second dequeue must return the second launch's items";
}

// Rounds of enqueue and dequeue on a small queue starting near 2^32, against
// a host model of the FIFO as a list of launches.
TEST_F(StackRingQueueCases, RandomRoundsAgainstModel) {
  const auto s = cudalab::test::seed();
  const std::size_t capacity = 1000;
  GuardedQueue q(capacity);
  q.reset_at(kNear32);
  std::deque<std::vector<int>> model;  // the batches still in the queue, oldest first
  std::size_t size = 0;
  const auto sizes = cudalab::gen::uniform_int<unsigned>(200, s, 0, 700);
  for (std::size_t round = 0; round < 100; ++round) {
    const std::string ctx = cudalab::test::context(kExercise, capacity, s) + "round " + std::to_string(round) +
                            ", queue held " + std::to_string(size) + ": ";
    const std::size_t k = std::min<std::size_t>(sizes[2 * round], capacity - size);
    const auto items = queue_items(k, s + round);
    const auto flags = random_flags(k, s + round, 800);
    enqueue(q, items, flags);
    const auto stored = cudalab::reference::pushed_items(items, flags);
    if (!stored.empty()) model.push_back(stored);
    size += stored.size();
    ASSERT_EQ(size, q.counters().second - q.counters().first) << ctx << "tail - head after the enqueue";
    const std::size_t m = sizes[2 * round + 1];
    auto got = without_empty(dequeue(q, m));
    ASSERT_EQ(std::min(m, size), got.size()) << ctx << "dequeue of " << m << " must return min(m, size) items";
    // The oldest items: whole batches, then part of one batch (any part).
    std::vector<int> whole;
    std::size_t need = got.size();
    while (need > 0 && model.front().size() <= need) {
      whole.insert(whole.end(), model.front().begin(), model.front().end());
      need -= model.front().size();
      model.pop_front();
    }
    std::sort(got.begin(), got.end());
    std::vector<int> sorted_whole = whole;
    std::sort(sorted_whole.begin(), sorted_whole.end());
    std::vector<int> rest;  // got minus the whole batches: must come from the next batch
    std::set_difference(got.begin(), got.end(), sorted_whole.begin(), sorted_whole.end(), std::back_inserter(rest));
    ASSERT_EQ(got.size() - whole.size(), rest.size())
        << ctx << "an older launch's item is missing from the dequeued items (FIFO between launches)";
    if (need > 0) {
      ASSERT_EQ(not_a_submultiset(model.front(), rest), "") << ctx << "items out of FIFO order";
      std::vector<int> left = model.front();
      std::sort(left.begin(), left.end());
      std::vector<int> remaining;
      std::set_difference(left.begin(), left.end(), rest.begin(), rest.end(), std::back_inserter(remaining));
      model.front() = remaining;
    }
    size -= got.size();
    ASSERT_EQ(q.slots().guard_damage(), "") << ctx << "write outside the slots";
  }
}

// The error word keeps every bit until clear() (stack.cuh: "After an error
// the flags stay set until clear()"). An enqueue that finds the queue full
// adds kOverflow to the kUnderflow an earlier dequeue left; a dequeue that
// finds it empty adds kUnderflow to an earlier kOverflow; calls that succeed
// leave the word as it was. (CapacityZero covers only a dequeue after an
// enqueue, so an enqueue that stores its bit passed every other test.)
TEST_F(StackRingQueueCases, FlagsAreSticky) {
  const auto s = cudalab::test::seed();
  {
    const std::string ctx = cudalab::test::context(kExercise, 7, s) +
                            "capacity 8, kUnderflow left by an earlier dequeue: ";
    GuardedQueue q(8);
    q.reset_at(kNear32);
    q.set_flags(kUnderflow);
    const auto first = queue_items(5, s);
    enqueue(q, first);
    ASSERT_EQ(kUnderflow, q.flags()) << ctx << "5 enqueues that all fit must leave the error word as it was "
                                     << "(kUnderflow, " << kUnderflow << "): set a bit only on failure, never "
                                     << "store or clear the word";
    const auto second = queue_items(7, s + 1);
    enqueue(q, second);
    const auto [h, t] = q.counters();
    ASSERT_EQ(8u, t - h) << ctx << "5 + 7 enqueues into 8 slots: exactly 8 items stored";
    ASSERT_EQ(kOverflow | kUnderflow, q.flags())
        << ctx << "then 7 enqueues, 3 of which fit: kOverflow must be added to kUnderflow (expected "
        << (kOverflow | kUnderflow) << "). The flags stay set until clear(): set kOverflow with an atomic "
        << "OR (set_flag, fetch_or, atomicOr), never store the whole word (*queue.errors = kOverflow "
        << "loses the kUnderflow of an earlier dequeue)";
    ASSERT_EQ(q.slots().guard_damage(), "") << ctx << "enqueue wrote outside the slots";
  }
  {
    const std::string ctx = cudalab::test::context(kExercise, 9, s) +
                            "capacity 8 holding 5 items, kOverflow left by an earlier enqueue: ";
    GuardedQueue q(8);
    q.reset_at(kNear32);
    const auto items = queue_items(5, s + 2);
    enqueue(q, items);
    q.set_flags(kOverflow);
    auto got = without_empty(dequeue(q, 3));
    ASSERT_EQ(3u, got.size()) << ctx << "3 dequeues from 5 items";
    ASSERT_EQ(kOverflow, q.flags()) << ctx << "3 dequeues that all find an item must leave the error word as it "
                                    << "was (kOverflow, " << kOverflow << ")";
    const auto rest = without_empty(dequeue(q, 6));
    got.insert(got.end(), rest.begin(), rest.end());
    ASSERT_EQ(multiset_difference(items, got), "") << ctx << "the 5 items, each dequeued once";
    ASSERT_EQ(kOverflow | kUnderflow, q.flags())
        << ctx << "then 6 dequeues, 4 of which find it empty: kUnderflow must be added to kOverflow "
        << "(expected " << (kOverflow | kUnderflow) << "): set it with an atomic OR, never store the word";
  }
}

TEST_F(StackRingQueueCases, CountersBeyond32Bits) {
  GuardedQueue q(777);
  q.reset_at((1ull << 40) + 5);
  const auto items = queue_items(777, 3);
  enqueue(q, items);
  const auto got = dequeue(q, 777);
  EXPECT_EQ(multiset_difference(items, without_empty(got)), "")
      << "[" << kExercise << "] head = tail = 2^40 + 5: keep the counters and the index arithmetic in 64 bits";
  EXPECT_EQ((1ull << 40) + 5 + 777, q.counters().first);
}

TEST_F(StackRingQueueCases, RepeatedLarge) {
  const std::size_t n = (1u << 22) + 1;
  CUDALAB_SKIP_IF_ABOVE_MAX_N(n);
  const auto s = cudalab::test::seed();
  const auto items = queue_items(n, s);
  GuardedQueue q(n - 1001);
  for (int rep = 0; rep < 3; ++rep) {
    q.reset_at(kNear32 - 12345 * static_cast<unsigned long long>(rep));
    enqueue(q, items);
    const auto [h, t] = q.counters();
    ASSERT_EQ(n - 1001, t - h) << cudalab::test::context(kExercise, n, s) << "repetition " << rep;
    const auto got = without_empty(dequeue(q, n));
    ASSERT_EQ(n - 1001, got.size()) << cudalab::test::context(kExercise, n, s) << "repetition " << rep;
    ASSERT_EQ(not_a_submultiset(items, got), "") << cudalab::test::context(kExercise, n, s) << "repetition " << rep;
  }
}

TEST_F(StackRingQueueCases, BadInputChangesNothing) {
  GuardedQueue q(8);
  EXPECT_THROW(cudalab::stack::ring_queue_enqueue(q.view(), nullptr, nullptr, 3, nullptr), std::invalid_argument);
  EXPECT_THROW(cudalab::stack::ring_queue_dequeue(q.view(), 3, nullptr, kEmpty, nullptr), std::invalid_argument);
  CUDALAB_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(0u, q.counters().first);
  EXPECT_EQ(0u, q.counters().second);
  EXPECT_EQ(0u, q.flags());
}

TEST(StackRingQueueBadInput, Throws) {
  int* some = reinterpret_cast<int*>(std::uintptr_t{256});
  auto* c = reinterpret_cast<unsigned long long*>(std::uintptr_t{512});
  auto* e = reinterpret_cast<unsigned*>(std::uintptr_t{768});
  using cudalab::stack::ring_queue_dequeue;
  using cudalab::stack::ring_queue_enqueue;
  EXPECT_THROW(ring_queue_enqueue({nullptr, 4, c, c + 1, e}, some, nullptr, 1, nullptr), std::invalid_argument);
  EXPECT_THROW(ring_queue_enqueue({some, 4, nullptr, c + 1, e}, some, nullptr, 1, nullptr), std::invalid_argument);
  EXPECT_THROW(ring_queue_enqueue({some, 4, c, nullptr, e}, some, nullptr, 1, nullptr), std::invalid_argument);
  EXPECT_THROW(ring_queue_enqueue({some, 4, c, c + 1, nullptr}, some, nullptr, 1, nullptr), std::invalid_argument);
  EXPECT_THROW(ring_queue_enqueue({some, 4, c, c + 1, e}, nullptr, nullptr, 1, nullptr), std::invalid_argument);
  EXPECT_THROW(ring_queue_enqueue({some, 4, c, c + 1, e}, some, nullptr, cudalab::stack::max_items + 1, nullptr),
               std::invalid_argument);
  EXPECT_THROW(ring_queue_dequeue({nullptr, 4, c, c + 1, e}, 1, some, kEmpty, nullptr), std::invalid_argument);
  EXPECT_THROW(ring_queue_dequeue({some, 4, c, c + 1, e}, 1, nullptr, kEmpty, nullptr), std::invalid_argument);
  EXPECT_THROW(ring_queue_dequeue({some, 4, c, c + 1, e}, cudalab::stack::max_items + 1, some, kEmpty, nullptr),
               std::invalid_argument);
}

}  // namespace
