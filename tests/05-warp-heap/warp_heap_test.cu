// Tests of exercise 5.3, cudalab::heap::warp_heap (suites HeapWarpHeap*):
// scripts of pushes and pops, several heaps at once, checked step by step
// (popped entry, top, size, flags) against std::priority_queue with the same
// capacity and order. Run: tools/grade 5.3
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "heap_test_util.cuh"

namespace {

using namespace cudalab::test::heap;
using cudalab::heap::HeapStorageView;
constexpr const char* kExercise = "5.3 warp_heap";
constexpr int kW = cudalab::heap::node_size;

/// Device memory for `heaps` heaps of `capacity` nodes with one poisoned
/// guard heap before and one after: a write outside the heaps' slices
/// changes a guard.
class GuardedStorage {
 public:
  GuardedStorage(std::size_t heaps, std::size_t capacity)
      : heaps_(heaps), capacity_(capacity), keys_((heaps + 2) * slice()), values_((heaps + 2) * slice()) {
    keys_.fill_bytes(kPoison);
    values_.fill_bytes(kPoison);
  }
  HeapStorageView view() {
    return {keys_.data() + slice(), values_.data() + slice(), heaps_, capacity_};
  }
  std::size_t slice() const { return capacity_ * kW; }
  /// Empty when both guards still hold kPoison.
  std::string guard_damage() const {
    const auto k = keys_.download();
    const auto v = values_.download();
    const std::size_t after = (heaps_ + 1) * slice();
    for (std::size_t i = 0; i < slice(); ++i) {
      for (const std::size_t at : {i, after + i}) {
        unsigned char bytes[8];
        std::memcpy(bytes, &k[at], 4);
        std::memcpy(bytes + 4, &v[at], 4);
        for (const unsigned char b : bytes)
          if (b != kPoison)
            return std::string("storage ") + (at < slice() ? "before heap 0" : "after the last heap") +
                   " was written (element " + std::to_string(at < slice() ? at : at - after) +
                   " of the guard): a heap must stay inside its slice of capacity * 32 entries";
      }
    }
    return {};
  }

 private:
  std::size_t heaps_, capacity_;
  cudalab::DeviceBuffer<float> keys_;
  cudalab::DeviceBuffer<int> values_;
};

/// Runs the scripts (all of one length) on the GPU, compares every step
/// with the reference, and checks the guards and the untouched steps.
void run_and_check(const std::vector<std::vector<HeapOp>>& scripts, std::size_t capacity, const std::string& ctx) {
  const std::size_t heaps = scripts.size();
  const std::size_t len = heaps == 0 ? 0 : scripts[0].size();
  std::vector<HeapOp> ops;
  ops.reserve(heaps * len);
  for (const auto& s : scripts) ops.insert(ops.end(), s.begin(), s.end());
  const auto d_ops = to_device(ops);
  auto d_steps = poisoned<HeapStep>(heaps * len);
  GuardedStorage storage(heaps, capacity);
  cudalab::heap::warp_heap(storage.view(), d_ops.data(), len, heaps, d_steps.data(), nullptr);
  CUDALAB_CHECK(cudaDeviceSynchronize());
  const auto got = d_steps.download();
  for (std::size_t h = 0; h < heaps; ++h) {
    const auto want = cudalab::reference::run_heap_script(scripts[h], capacity * kW);
    const std::string diff = first_step_difference(scripts[h], want, got.data() + h * len, h);
    ASSERT_EQ(diff, "") << ctx << "capacity " << capacity << " nodes, " << heaps << " heaps of " << len
                        << " steps: ";
  }
  ASSERT_EQ(storage.guard_damage(), "") << ctx;
}

float wide_key(const Random& r, std::uint64_t i) {
  return static_cast<float>(static_cast<double>(r(i) >> 11) * 0x1.0p-53 * 2e6 - 1e6);
}

/// Push n entries (wide keys, or keys from `span` values when span > 0),
/// then pop n + 1 times (the last pop finds the heap empty).
std::vector<HeapOp> fill_then_drain(const Random& r, std::uint64_t stream, std::size_t n, std::uint64_t span) {
  std::vector<HeapOp> s;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t j = stream * 10'000'000ull + 2 * i;
    s.push_back(push_op(span ? static_cast<float>(r.below(j, span)) : wide_key(r, j),
                        static_cast<int>(r.below(j + 1, 1u << 20))));
  }
  for (std::size_t i = 0; i <= n; ++i) s.push_back(pop_op());
  return s;
}

/// The size a test reports to CUDALAB_SKIP_IF_ABOVE_MAX_N: lane operations
/// (32 per heap operation), so sanitizer runs (CUDALAB_MAX_N = 2^22) keep
/// the cases of up to about 131,000 operations and skip the long ones.
std::size_t lane_ops(std::size_t heaps, std::size_t ops_per_heap) { return heaps * ops_per_heap * kW; }

class HeapWarpHeap : public cudalab::test::GpuTestWithParam<std::size_t> {};

// Heaps of n entries (1, 31, 32, 33, 1024, 32 * 33 + 1, and one that opens
// a fourth level), filled then drained, several heaps at once; the capacity
// is exactly what n needs, so the last node of the full heap may be partial.
TEST_P(HeapWarpHeap, FillThenDrain) {
  const std::size_t n = GetParam();
  const std::size_t heaps = n > 2000 ? 5 : 37;  // 37: several blocks, a partial last block
  CUDALAB_SKIP_IF_ABOVE_MAX_N(lane_ops(heaps, 2 * n + 1));
  const Random r{cudalab::test::seed()};
  const std::size_t capacity = (n + kW - 1) / kW;
  for (const std::uint64_t span : {0ull, 3ull}) {
    std::vector<std::vector<HeapOp>> scripts;
    for (std::size_t h = 0; h < heaps; ++h) scripts.push_back(fill_then_drain(r, h + 100 * span, n, span));
    run_and_check(scripts, capacity,
                  cudalab::test::context(kExercise, n, r.seed) + (span ? "keys 0..2 (duplicates): " : "wide keys: "));
  }
}

const std::vector<std::size_t> kEntries = {1, 2, 31, 32, 33, 63, 64, 65, 1023, 1024, 1025, 32 * 33 + 1, 33825};

INSTANTIATE_TEST_SUITE_P(Entries, HeapWarpHeap, ::testing::ValuesIn(kEntries),
                         [](const ::testing::TestParamInfo<std::size_t>& info) {
                           return "n" + std::to_string(info.param);
                         });

class HeapWarpHeapCases : public cudalab::test::GpuTest {};

// Random interleavings of push and pop (55 % pushes, so the heap grows past
// its capacity of 4 nodes, 128 entries), keys with many duplicates.
TEST_F(HeapWarpHeapCases, RandomInterleavedWithDuplicatesAndOverflow) {
  const std::size_t heaps = 16, len = 6000, capacity = 4;  // 128 entries: overflows happen
  CUDALAB_SKIP_IF_ABOVE_MAX_N(lane_ops(heaps, len));
  const Random r{cudalab::test::seed()};
  for (const std::uint64_t span : {0ull, 16ull, 1ull}) {
    std::vector<std::vector<HeapOp>> scripts(heaps);
    for (std::size_t h = 0; h < heaps; ++h)
      for (std::size_t i = 0; i < len; ++i) {
        const std::uint64_t j = (h * len + i) * 4 + span;
        if (r.below(j, 100) < 55)
          scripts[h].push_back(push_op(span ? static_cast<float>(r.below(j + 1, span)) : wide_key(r, j + 1),
                                       static_cast<int>(r.below(j + 2, 50))));
        else
          scripts[h].push_back(pop_op());
      }
    run_and_check(scripts, capacity,
                  cudalab::test::context(kExercise, len, r.seed) + "interleaved, key span " + std::to_string(span) +
                      ": ");
  }
}

// Larger heaps with a random walk of the size, and many warps.
TEST_F(HeapWarpHeapCases, RandomInterleavedManyHeaps) {
  const std::size_t heaps = 300, len = 8000, capacity = 100;
  CUDALAB_SKIP_IF_ABOVE_MAX_N(lane_ops(heaps, len));
  const Random r{cudalab::test::seed()};
  std::vector<std::vector<HeapOp>> scripts(heaps);
  for (std::size_t h = 0; h < heaps; ++h)
    for (std::size_t i = 0; i < len; ++i) {
      const std::uint64_t j = (h * len + i) * 3;
      if (r.below(j, 100) < 60)
        scripts[h].push_back(push_op(wide_key(r, j + 1), static_cast<int>(r.below(j + 2, 1000))));
      else
        scripts[h].push_back(pop_op());
    }
  run_and_check(scripts, capacity, cudalab::test::context(kExercise, len, r.seed) + "300 heaps: ");
}

// Adversarial orders: decreasing keys (every push climbs to the root),
// increasing keys (none climbs), equal keys with decreasing values, and
// entries all identical.
TEST_F(HeapWarpHeapCases, AdversarialOrders) {
  const std::size_t n = 3000;
  CUDALAB_SKIP_IF_ABOVE_MAX_N(lane_ops(4, 2 * n + 1));
  std::vector<std::vector<HeapOp>> scripts(4);
  for (std::size_t i = 0; i < n; ++i) {
    const auto fi = static_cast<float>(i);
    scripts[0].push_back(push_op(-fi, static_cast<int>(i)));
    scripts[1].push_back(push_op(fi, static_cast<int>(i)));
    scripts[2].push_back(push_op(7.0f, static_cast<int>(n - i)));
    scripts[3].push_back(push_op(1.5f, 42));
  }
  for (auto& s : scripts)
    for (std::size_t i = 0; i <= n; ++i) s.push_back(pop_op());
  run_and_check(scripts, (n + kW - 1) / kW, cudalab::test::context(kExercise, n, 0) + "adversarial orders: ");
}

// Overflow and underflow: 2 nodes (64 entries), 100 pushes, 70 pops, and
// keys the heap must refuse (NaN, +infinity); -infinity is a valid key.
TEST_F(HeapWarpHeapCases, OverflowUnderflowInvalidKeys) {
  const Random r{cudalab::test::seed()};
  std::vector<HeapOp> s;
  s.push_back(push_op(std::numeric_limits<float>::quiet_NaN(), 1));
  s.push_back(push_op(std::numeric_limits<float>::infinity(), 2));
  s.push_back(push_op(-std::numeric_limits<float>::infinity(), 3));
  s.push_back(pop_op());
  s.push_back(pop_op());  // empty
  for (std::size_t i = 0; i < 100; ++i) s.push_back(push_op(wide_key(r, i), static_cast<int>(i)));
  for (std::size_t i = 0; i < 70; ++i) s.push_back(pop_op());
  for (std::size_t i = 0; i < 10; ++i) s.push_back(push_op(wide_key(r, 500 + i), static_cast<int>(i)));
  s.push_back(push_op(std::numeric_limits<float>::quiet_NaN(), 1));
  for (std::size_t i = 0; i < 12; ++i) s.push_back(pop_op());
  run_and_check({s, s, s}, 2, cudalab::test::context(kExercise, s.size(), r.seed) + "overflow and underflow: ");
  // Capacity 0: every push overflows, every pop underflows.
  run_and_check({s}, 0, cudalab::test::context(kExercise, s.size(), r.seed) + "capacity 0: ");
}

// The largest capacity (64 KiB of cached tops: one warp per block, opt-in
// shared memory) with a short script.
TEST_F(HeapWarpHeapCases, LargestCapacity) {
  const Random r{cudalab::test::seed()};
  std::vector<std::vector<HeapOp>> scripts(3, fill_then_drain(r, 7, 5000, 0));
  run_and_check(scripts, cudalab::heap::max_capacity_nodes,
                cudalab::test::context(kExercise, 5000, r.seed) + "max_capacity_nodes: ");
}

TEST_F(HeapWarpHeapCases, NothingToDo) {
  GuardedStorage storage(0, 4);
  EXPECT_NO_THROW(cudalab::heap::warp_heap(storage.view(), nullptr, 0, 0, nullptr, nullptr));
  GuardedStorage one(1, 4);
  EXPECT_NO_THROW(cudalab::heap::warp_heap(one.view(), nullptr, 0, 1, nullptr, nullptr));
  CUDALAB_CHECK(cudaDeviceSynchronize());
}

// Bad input, without a GPU.
TEST(HeapWarpHeapArgs, BadStorageAndPointersThrow) {
  HeapOp op = pop_op();
  HeapStep step{};
  float k = 0;
  int v = 0;
  const HeapStorageView ok{&k, &v, 1, 1};
  EXPECT_THROW(cudalab::heap::warp_heap(ok, nullptr, 1, 1, &step), std::invalid_argument);
  EXPECT_THROW(cudalab::heap::warp_heap(ok, &op, 1, 1, nullptr), std::invalid_argument);
  EXPECT_THROW(cudalab::heap::warp_heap(ok, &op, 1, 2, &step), std::invalid_argument);  // 2 heaps, storage for 1
  EXPECT_THROW(cudalab::heap::warp_heap(HeapStorageView{nullptr, &v, 1, 1}, &op, 1, 1, &step),
               std::invalid_argument);
  EXPECT_THROW(cudalab::heap::warp_heap(HeapStorageView{&k, &v, 1, cudalab::heap::max_capacity_nodes + 1}, &op, 1,
                                        1, &step),
               std::invalid_argument);
  EXPECT_THROW(cudalab::heap::warp_heap(ok, &op, std::size_t{1} << 40, std::size_t{1} << 30, &step),
               std::invalid_argument);
  EXPECT_THROW(cudalab::heap::HeapStorage(1, cudalab::heap::max_capacity_nodes + 1), std::invalid_argument);
}

}  // namespace
