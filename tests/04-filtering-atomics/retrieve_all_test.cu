// Tests of exercise 4.7, cudalab::filter::retrieve_all (suites
// FilterRetrieveAll*): one or several sub-tables of different capacities,
// all empty, all erased, full, mixed, keys next to the sentinels, outputs
// too small; pairs compared as multisets, guards after both outputs.
// Run: tools/grade 4.7   or   build/default/bin/retrieve_all_test_starter
#include <climits>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "filter_test_battery.cuh"

namespace cudalab::test::filter {
namespace {

using cudalab::filter::kEmptyKey;
using cudalab::filter::kErasedKey;
using cudalab::filter::Slot;
using cudalab::filter::SubTable;
using Pair = std::pair<long long, long long>;

constexpr const char* kExercise = "4.7 retrieve_all";

/// What fills a sub-table's slots: live with probability live/1024, else
/// erased with probability erased/1024, else empty.
struct Fill {
  unsigned live;
  unsigned erased;
  const char* name;
};

std::vector<Slot> make_table(std::size_t capacity, std::uint64_t s, Fill fill) {
  const auto r = gen::uniform_int<unsigned>(capacity, s, 0, 1023);
  const auto keys = gen::uniform_int<long long>(capacity, s ^ 0x4B455953ull, LLONG_MIN + 2, LLONG_MAX);
  const auto values = gen::uniform_int<long long>(capacity, s ^ 0x56414C53ull, LLONG_MIN, LLONG_MAX);
  std::vector<Slot> t(capacity);
  for (std::size_t i = 0; i < capacity; ++i) {
    if (r[i] < fill.live)
      t[i] = Slot{keys[i], values[i]};
    else if (r[i] < fill.live + fill.erased)
      t[i] = Slot{kErasedKey, values[i]};  // an erased slot keeps some stale value
    else
      t[i] = Slot{kEmptyKey, values[i]};
  }
  return t;
}

/// Copies the sub-tables to the device (each in its own allocation), runs
/// retrieve_all into guarded outputs of `capacity` pairs and checks the
/// count, the guards, the unwritten tail and the pairs.
void check_retrieve(const std::vector<std::vector<Slot>>& tables, std::size_t capacity, std::uint64_t s,
                    const std::string& what) {
  std::vector<DeviceBuffer<Slot>> storage;
  std::vector<SubTable> views;
  std::size_t slots = 0;
  for (const auto& t : tables) {
    storage.emplace_back(t);
    views.push_back(SubTable{storage.back().data(), t.size()});
    slots += t.size();
  }
  GuardedArray<long long> keys(capacity), values(capacity, 3);
  DeviceBuffer<unsigned long long> d_count(1);
  d_count.fill_bytes(kPoison);
  cudalab::filter::retrieve_all(views.data(), views.size(), capacity ? keys.data() : nullptr,
                                capacity ? values.data() : nullptr, capacity, d_count.data(), nullptr);
  CUDALAB_CHECK(cudaDeviceSynchronize());

  const std::vector<Pair> expected = reference::live_pairs(tables);
  std::string sizes;
  for (const auto& t : tables) sizes += (sizes.empty() ? "" : ", ") + std::to_string(t.size());
  const std::string ctx = context(kExercise, slots, s) + what + "; sub-table capacities {" + sizes + "}, " +
                          std::to_string(expected.size()) + " live slots, output capacity " +
                          std::to_string(capacity) + ": ";
  const unsigned long long count = d_count.download()[0];
  ASSERT_EQ(static_cast<unsigned long long>(expected.size()), count)
      << ctx << (count == kPoisonCount ? "*count was never written"
                                       : "*count must be the number of live slots (key neither kEmptyKey nor "
                                         "kErasedKey) of all sub-tables, also when it exceeds the capacity");
  const std::string kdamage = keys.guard_damage();
  ASSERT_EQ("", kdamage) << ctx << "keys_out: " << kdamage << ": check the slot against capacity before storing";
  const std::string vdamage = values.guard_damage();
  ASSERT_EQ("", vdamage) << ctx << "values_out: " << vdamage << ": check the slot against capacity before storing";
  const std::size_t written = std::min<std::size_t>(expected.size(), capacity);
  const std::vector<long long> k = keys.download();
  const std::vector<long long> v = values.download();
  const long long poison = GuardedArray<long long>::poison_value();
  for (std::size_t j = written; j < capacity; ++j)
    ASSERT_TRUE(k[j] == poison && v[j] == poison) << ctx << "pair " << j << " was written although only "
                                                  << written << " slots are live";
  std::vector<Pair> got(written);
  for (std::size_t j = 0; j < written; ++j) got[j] = {k[j], v[j]};
  std::vector<Pair> want = expected;
  std::sort(want.begin(), want.end());
  std::sort(got.begin(), got.end());
  if (written == expected.size()) {
    for (std::size_t j = 0; j < written; ++j)
      ASSERT_TRUE(want[j] == got[j]) << ctx << "the " << j << "-th pair in sorted order differs: expected ("
                                     << want[j].first << ", " << want[j].second << "), found (" << got[j].first
                                     << ", " << got[j].second << ")"
                                     << (got[j].first == kEmptyKey || got[j].first == kErasedKey
                                             ? ": a sentinel key was retrieved; only live slots count"
                                             : ": every live slot exactly once, its key with its own value");
  } else {
    ASSERT_TRUE(std::includes(want.begin(), want.end(), got.begin(), got.end()))
        << ctx << "with a small output every written pair must be a live slot's (key, value), each at most once";
  }
}

const Fill kMixed{410, 307, "mixed: 40 % live, 30 % erased, 30 % empty"};
const Fill kAllEmpty{0, 0, "all empty"};
const Fill kAllErased{0, 1024, "all erased"};
const Fill kFull{1024, 0, "full"};

class FilterRetrieveAll : public GpuTestWithParam<std::size_t> {};

/// One sub-table of each size, four fillings.
TEST_P(FilterRetrieveAll, OneSubTable) {
  const std::size_t n = GetParam();
  CUDALAB_SKIP_IF_ABOVE_MAX_N(n);
  const auto s = seed();
  for (const Fill& fill : {kMixed, kAllEmpty, kAllErased, kFull}) {
    check_retrieve({make_table(n, s, fill)}, n, s, fill.name);
    if (HasFatalFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(Sizes, FilterRetrieveAll, ::testing::ValuesIn(kSizes), size_name);

class FilterRetrieveAllCases : public GpuTest {};

/// Several sub-tables of different capacities (including 0), each filled
/// differently.
TEST_F(FilterRetrieveAllCases, SeveralSubTables) {
  const auto s = seed();
  const std::vector<std::size_t> caps = {1, 33, 0, 2048, 2049, 100003, 4097, 0, 255};
  std::vector<std::vector<Slot>> tables;
  std::size_t total = 0;
  for (std::size_t i = 0; i < caps.size(); ++i) {
    const Fill fills[] = {kMixed, kFull, kAllEmpty, kAllErased};
    tables.push_back(make_table(caps[i], s + i, fills[i % 4]));
    total += caps[i];
  }
  check_retrieve(tables, total, s, "nine sub-tables, fillings mixed, full, empty, erased in turn");
  if (HasFatalFailure()) return;
  std::vector<std::vector<Slot>> all_mixed;
  for (std::size_t i = 0; i < caps.size(); ++i) all_mixed.push_back(make_table(caps[i], s + 100 + i, kMixed));
  check_retrieve(all_mixed, total, s, "nine mixed sub-tables");
}

/// The most sub-tables a call accepts, of growing capacities (as a dynamic
/// map grows), the last ones empty or erased.
TEST_F(FilterRetrieveAllCases, SixteenSubTables) {
  const auto s = seed();
  std::vector<std::vector<Slot>> tables;
  std::size_t total = 0;
  for (std::size_t i = 0; i < cudalab::filter::max_sub_tables; ++i) {
    const std::size_t cap = (std::size_t{1} << (i % 12)) * 37 + i;
    tables.push_back(make_table(cap, s + i, i < 12 ? kMixed : (i % 2 ? kAllEmpty : kAllErased)));
    total += cap;
  }
  check_retrieve(tables, total, s, "16 sub-tables");
}

/// Keys next to the sentinels and a sentinel value: only the two sentinel
/// keys mark a slot as not live.
TEST_F(FilterRetrieveAllCases, KeysNextToSentinels) {
  const auto s = seed();
  std::vector<Slot> t = {{kEmptyKey, 1},           {kErasedKey, 2},      {LLONG_MIN + 2, 3}, {LLONG_MAX, 4},
                         {-1, kEmptyKey},          {0, kErasedKey},      {kEmptyKey, 5},     {1, 6},
                         {LLONG_MAX - 1, LLONG_MIN}, {kErasedKey, kEmptyKey}};
  check_retrieve({t, make_table(3000, s, kMixed), t}, 4000, s, "keys LLONG_MIN + 2, LLONG_MAX, -1, 0, 1");
}

/// Outputs too small: 0 (null outputs), 1, half, one short; the count must
/// still be the number of live slots.
TEST_F(FilterRetrieveAllCases, CapacityTooSmall) {
  const auto s = seed();
  const std::vector<std::vector<Slot>> tables = {make_table(70001, s, kMixed), make_table(5000, s + 1, kFull)};
  const std::size_t live = reference::live_pairs(tables).size();
  for (const std::size_t capacity : {std::size_t{0}, std::size_t{1}, live / 2, live - 1, live}) {
    check_retrieve(tables, capacity, s, "two sub-tables");
    if (HasFatalFailure()) return;
  }
}

/// No sub-tables at all: the count is 0.
TEST_F(FilterRetrieveAllCases, NoSubTables) {
  DeviceBuffer<unsigned long long> d_count(1);
  d_count.fill_bytes(kPoison);
  cudalab::filter::retrieve_all(nullptr, 0, nullptr, nullptr, 0, d_count.data(), nullptr);
  CUDALAB_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(0ull, d_count.download()[0]) << "[" << kExercise << "] no sub-tables must set *count to 0";
}

/// Large mixed tables, three times: races show as rare failures.
TEST_F(FilterRetrieveAllCases, RepeatedLarge) {
  const std::size_t n = (1u << 22) + 3;
  CUDALAB_SKIP_IF_ABOVE_MAX_N(n);
  const auto s = seed();
  const std::vector<std::vector<Slot>> tables = {make_table(n, s, kMixed), make_table(n / 3, s + 1, kMixed)};
  for (int rep = 0; rep < 3; ++rep) {
    check_retrieve(tables, n + n / 3, s, "repetition " + std::to_string(rep));
    if (HasFatalFailure()) return;
  }
}

/// On the GPU: a rejected call changes neither the count nor the outputs.
TEST_F(FilterRetrieveAllCases, BadInputChangesNothing) {
  GuardedArray<long long> keys(8), values(8);
  DeviceBuffer<unsigned long long> d_count(1);
  d_count.fill_bytes(kPoison);
  const SubTable bad{nullptr, 10};
  EXPECT_THROW(cudalab::filter::retrieve_all(&bad, 1, keys.data(), values.data(), 8, d_count.data(), nullptr),
               std::invalid_argument);
  CUDALAB_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(kPoisonCount, d_count.download()[0]) << "[" << kExercise << "] a call that threw wrote *count";
  EXPECT_EQ(std::vector<long long>(8, GuardedArray<long long>::poison_value()), keys.download())
      << "[" << kExercise << "] a call that threw wrote keys_out";
}

/// Bad arguments throw std::invalid_argument before any CUDA call: no GPU needed.
TEST(FilterRetrieveAllBadInput, Throws) {
  const auto* some_slots = reinterpret_cast<const Slot*>(std::uintptr_t{256});  // never dereferenced
  auto* some = reinterpret_cast<long long*>(std::uintptr_t{512});
  auto* some_count = reinterpret_cast<unsigned long long*>(std::uintptr_t{768});
  const SubTable good{some_slots, 10};
  using cudalab::filter::retrieve_all;
  EXPECT_THROW(retrieve_all(nullptr, 1, some, some, 10, some_count, nullptr), std::invalid_argument)
      << "null tables, num_tables > 0";
  const std::vector<SubTable> seventeen(cudalab::filter::max_sub_tables + 1, good);
  EXPECT_THROW(retrieve_all(seventeen.data(), seventeen.size(), some, some, 10, some_count, nullptr),
               std::invalid_argument)
      << "more than max_sub_tables";
  const SubTable null_slots{nullptr, 5};
  EXPECT_THROW(retrieve_all(&null_slots, 1, some, some, 10, some_count, nullptr), std::invalid_argument)
      << "null slots with capacity > 0";
  EXPECT_THROW(retrieve_all(&good, 1, nullptr, some, 10, some_count, nullptr), std::invalid_argument)
      << "null keys_out, capacity > 0";
  EXPECT_THROW(retrieve_all(&good, 1, some, nullptr, 10, some_count, nullptr), std::invalid_argument)
      << "null values_out, capacity > 0";
  EXPECT_THROW(retrieve_all(&good, 1, some, some, 10, nullptr, nullptr), std::invalid_argument) << "null count";
  const SubTable huge{some_slots, (std::size_t{1} << 39) + 1};
  const SubTable two_huge[] = {huge, huge};
  EXPECT_THROW(retrieve_all(two_huge, 2, some, some, 10, some_count, nullptr), std::invalid_argument)
      << "more than max_slots in all";
}

}  // namespace
}  // namespace cudalab::test::filter
