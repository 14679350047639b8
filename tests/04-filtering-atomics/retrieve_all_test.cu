// Tests of exercise 4.7, cudalab::filter::retrieve_all (suites
// FilterRetrieveAll*): one or several sub-tables of different capacities,
// all empty, all erased, full, mixed, keys next to the sentinels, outputs
// too small; pairs compared as multisets, guards after both outputs; and
// LargeIndex: one sub-table of more than 2^31 slots (32 GiB, where the device
// has the memory).
// Run: tools/grade 4.7   or   build/default/bin/retrieve_all_test_starter
#include <climits>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <optional>
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

// ----------------------------------------------------------------------------- LargeIndex

// One sub-table of more than 2^31 slots (32 GiB, filled on the device), which
// the contract allows (capacities are std::size_t, up to max_slots = 2^40 in
// all): a slot index kept in int becomes negative past 2^31 - 1, and the live
// slots from there on are never looked at. Every 257th slot is live (key = its
// index, value derived from it), the one after it erased, the rest empty: about
// 8.4 million pairs, checked on the device against sums computed on the host.

constexpr std::size_t kLiveStride = 257;  // a prime: live slots fall on every lane, round and warp

__host__ __device__ constexpr bool large_live(std::size_t i) { return i % kLiveStride == 0; }
__host__ __device__ constexpr long long large_value(std::size_t i) {
  return static_cast<long long>(i ^ 0x5A5A5A5A5A5A5A5Aull);
}

__global__ void fill_large_table(Slot* slots, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n; i += stride) {
    const long long key = large_live(i) ? static_cast<long long>(i)
                          : i % kLiveStride == 1 ? kErasedKey
                                                 : kEmptyKey;
    slots[i] = Slot{key, large_value(i)};
  }
}

/// out[0 .. live): `bad` pairs whose key is no live slot of the table or whose
/// value is not that slot's (the first at `first_bad`), and the checksums of
/// the keys of the others. Launch with whole warps.
struct LargeTableFindings {
  unsigned long long bad;
  unsigned long long first_bad;
  Checksums sums;
};

__global__ void check_large_table(const long long* keys, const long long* values, std::size_t live, std::size_t n,
                                  LargeTableFindings* f) {
  Tally bad;
  Checksums sums;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t j = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; j < live; j += stride) {
    const long long k = keys[j];
    const auto i = static_cast<std::size_t>(k);
    if (k < 0 || i >= n || !large_live(i) || values[j] != large_value(i)) {
      bad.add(j);
      continue;
    }
    sums.add(i);
  }
  bad.warp_reduce();
  sums.warp_reduce();
  if (threadIdx.x % 32 != 0) return;
  bad.flush_to(&f->bad, &f->first_bad);
  sums.flush_to(&f->sums);
}

/// One sub-table of 2^31 + 2^20 + 3 slots; skipped where the device (or its
/// profile) lacks the memory, or under a sanitizer's size cap.
class FilterRetrieveAllLargeIndex : public GpuTest {};

TEST_F(FilterRetrieveAllLargeIndex, SlotsAbove2To31) {
  const std::size_t n = kAbove2To31;
  CUDALAB_SKIP_IF_ABOVE_MAX_N(n);
  std::size_t live = 0;
  Checksums want;
  for (std::size_t i = 0; i < n; i += kLiveStride) {
    ++live;
    want.sum += i;
    want.sum_sq += static_cast<unsigned long long>(i) * i;
    want.xor_all ^= i;
  }
  const std::size_t live_below = (k2To31 + kLiveStride - 1) / kLiveStride;  // live slots i < 2^31
  const std::size_t bytes = n * sizeof(Slot) + 2 * (live + kGuard) * sizeof(long long);
  std::optional<DeviceBuffer<Slot>> slots;
  if (const std::string why = allocate_large(bytes, std::to_string(n) + " slots of 16 bytes and the output",
                                             [&] { slots.emplace(n); });
      !why.empty())
    GTEST_SKIP() << why;
  fill_large_table<<<1024, 256>>>(slots->data(), n);
  CUDALAB_CHECK_LAUNCH();
  GuardedArray<long long> keys(live), values(live);
  DeviceBuffer<unsigned long long> d_count(1);
  d_count.fill_bytes(kPoison);
  CUDALAB_CHECK(cudaDeviceSynchronize());

  const SubTable view{slots->data(), n};
  const std::string ctx = context(kExercise, n, 0) + "one sub-table of " + std::to_string(n) +
                          " slots (more than 2^31), every 257th live (key = its index), " + std::to_string(live) +
                          " live slots, output capacity " + std::to_string(live) + ": ";
  try {
    cudalab::filter::retrieve_all(&view, 1, keys.data(), values.data(), live, d_count.data(), nullptr);
    CUDALAB_CHECK(cudaDeviceSynchronize());
  } catch (const std::exception& e) {
    FAIL() << ctx << "the call failed: " << e.what()
           << "\nA slot index computed in 32 bits wraps (int past 2^31 - 1 to a negative number) and reads "
              "outside the table: compute the slot index (the chunk's first slot, and each lane's slot) in "
              "std::size_t or unsigned long long.";
  }
  const unsigned long long count = d_count.download()[0];
  ASSERT_EQ(static_cast<unsigned long long>(live), count)
      << ctx << "*count is " << count << ". "
      << (count == kPoisonCount ? "*count was never written."
          : count == live_below
              ? "That is exactly the number of live slots below slot 2^31: no slot from 2^31 on was looked at. "
                "A slot index kept in int wraps past 2^31 - 1 to a negative number: compute it in std::size_t "
                "or unsigned long long (the chunk's first slot is (block * warps + warp) * 256, which needs "
                "64 bits in large sub-tables)."
              : "A slot index computed in 32 bits (int wraps past 2^31 - 1, unsigned past 2^32 - 1) skips or "
                "repeats slots: compute every slot index in std::size_t or unsigned long long.");
  ASSERT_EQ("", keys.guard_damage()) << ctx << "keys_out: " << keys.guard_damage();
  ASSERT_EQ("", values.guard_damage()) << ctx << "values_out: " << values.guard_damage();
  LargeTableFindings init{};
  init.first_bad = ULLONG_MAX;
  DeviceBuffer<LargeTableFindings> d_findings(std::vector<LargeTableFindings>{init});
  check_large_table<<<1024, 256>>>(keys.data(), values.data(), live, n, d_findings.data());
  CUDALAB_CHECK_LAUNCH();
  const LargeTableFindings f = d_findings.download()[0];
  ASSERT_EQ(0ull, f.bad) << ctx << f.bad << " output pair(s) are no live slot's key and value, the first at "
                         << "index " << f.first_bad << " of the output (the poison 0xA5... is a pair never "
                         << "written). Write key and value of the same live slot at the same output index.";
  ASSERT_TRUE(f.sums.sum == want.sum && f.sums.sum_sq == want.sum_sq && f.sums.xor_all == want.xor_all)
      << ctx << "the output holds live pairs only, but not each exactly once (the sums of their keys differ "
      << "from those of the live slots): some were written twice, over others. Compute every slot index and "
      << "output index in 64 bits.";
}

}  // namespace
}  // namespace cudalab::test::filter
