// Tests of exercise 3.2, cudalab::stack::push_warp_aggregated (suites
// StackPushWarpAggregated*): the push battery of 3.1, plus the order promise
// (the pushing lanes of one warp get consecutive slots in lane order).
// Run: tools/grade 3.2   or   build/default/bin/push_warp_aggregated_test_starter
#include "push_test_battery.cuh"

CUDALAB_PUSH_TEST_SUITES(StackPushWarpAggregated, "3.2 push_warp_aggregated",
                         cudalab::stack::push_warp_aggregated)

namespace {

using namespace cudalab::test::stack;

class StackPushWarpAggregatedOrder : public cudalab::test::GpuTestWithParam<unsigned> {};

// items[i] = i, so a slot's content names the thread that pushed it.
TEST_P(StackPushWarpAggregatedOrder, LanesGetConsecutiveSlotsInLaneOrder) {
  const std::size_t n = (1u << 20) + 7;
  const unsigned per_1024 = GetParam();
  const auto s = cudalab::test::seed();
  std::vector<int> items(n);
  for (std::size_t i = 0; i < n; ++i) items[i] = static_cast<int>(i);
  const auto flags = per_1024 >= 1024 ? std::vector<std::uint8_t>{} : random_flags(n, s, per_1024);
  GuardedStack stack(n);
  check_push("3.2 push_warp_aggregated", &cudalab::stack::push_warp_aggregated, stack, {}, items, flags, s,
             "order test, pushes with probability " + std::to_string(per_1024) + "/1024");
  if (HasFatalFailure()) return;
  const auto pushes = cudalab::reference::pushed_items(items, flags).size();
  const std::vector<int> slots = stack.slots().download();
  std::vector<long long> slot_of(n, -1);
  for (std::size_t k = 0; k < pushes; ++k) {
    ASSERT_TRUE(slots[k] >= 0 && static_cast<std::size_t>(slots[k]) < n) << "slot " << k << " holds " << slots[k];
    slot_of[static_cast<std::size_t>(slots[k])] = static_cast<long long>(k);
  }
  for (std::size_t warp = 0; warp * 32 < n; ++warp) {
    long long previous = -1;
    std::size_t previous_thread = 0;
    for (std::size_t i = warp * 32; i < n && i < warp * 32 + 32; ++i) {
      if (slot_of[i] < 0) continue;
      if (previous >= 0) {
        ASSERT_EQ(previous + 1, slot_of[i])
            << cudalab::test::context("3.2 push_warp_aggregated", n, s) << "warp " << warp << ": thread "
            << previous_thread << " (lane " << previous_thread % 32 << ") got slot " << previous
            << ", the next pushing lane, thread " << i << " (lane " << i % 32 << "), got slot " << slot_of[i]
            << ". Lane l's slot must be base + popc(mask & ((1u << l) - 1)).";
      }
      previous = slot_of[i];
      previous_thread = i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Density, StackPushWarpAggregatedOrder, ::testing::Values(1024u, 700u, 100u),
                         [](const ::testing::TestParamInfo<unsigned>& info) {
                           return "per1024_" + std::to_string(info.param);
                         });

}  // namespace
