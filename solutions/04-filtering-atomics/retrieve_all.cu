// Exercise 4.7: retrieve_all of an open-addressing hash table: every live
// slot (key neither kEmptyKey nor kErasedKey) of one or several sub-tables,
// compacted with warp-aggregated atomics.
// Lesson: chapters/04-filtering-atomics/README.md, "4.7".
// Grade:  tools/grade 4.7      Hints: tools/grade --hint 4.7
#include <cstddef>
#include <string>

#include "cudalab/error.cuh"
#include "cudalab/filter.cuh"
#include "cudalab/warp.cuh"
#include "cudalab/warp_aggregated.cuh"
#include "cudalab/warp_striped.cuh"

namespace cudalab::filter {
namespace {

using namespace warp_striped;  // kThreads, kWarps, kRounds (slots per lane), kChunk, kTile (cudalab/warp_striped.cuh)

// The sub-tables, passed by value as a kernel parameter. Sub-table s is
// covered by the blocks first_block[s] .. first_block[s + 1] - 1.
struct Tables {
  const Slot* slots[max_sub_tables];
  unsigned long long capacity[max_sub_tables];
  unsigned long long first_block[max_sub_tables + 1];
  unsigned count;
};

// Reads slot i of `slots` (n slots), or an empty slot past the end.
__device__ __forceinline__ Slot read_slot(const Slot* slots, unsigned long long i, unsigned long long n) {
  // BEGIN SOLUTION
  if (i >= n) return Slot{kEmptyKey, 0};
  // One 16-byte streaming load (a Slot is 16-byte aligned): the table is read once.
  const longlong2 p = __ldcs(reinterpret_cast<const longlong2*>(slots) + i);
  return Slot{p.x, p.y};
  // STARTER:
  // // TODO(4.7): slot i as one 16-byte streaming load (__ldcs of a longlong2:
  // // the table is read once), or an empty slot when i >= n.
  // return Slot{kEmptyKey, 0};
  // END SOLUTION
}

// The output as one array of slots, an output iterator in the manner of
// Thrust's zip_iterator: out[at] = s writes s.key to keys[at] and s.value to
// values[at].
struct PairOutput {
  long long* keys;
  long long* values;
  struct Ref {
    long long* key;
    long long* value;
    __device__ void operator=(const Slot& s) const {
      // BEGIN SOLUTION
      __stcs(key, s.key);  // streaming stores: the pairs are not read again
      __stcs(value, s.value);
      // STARTER:
      // // TODO(4.7): write s.key to *key and s.value to *value, with streaming
      // // stores (__stcs: the pairs are not read again).
      // END SOLUTION
    }
  };
  __device__ Ref operator[](unsigned long long at) const { return {keys + at, values + at}; }
};

// Warp w of block b filters the chunk of 256 slots starting at slot
// (8 (b - first_block[s]) + w) * 256 of its sub-table s; in round r lane l
// looks at slot chunk + 32 r + l.
__global__ void __launch_bounds__(kThreads)
    retrieve_all_kernel(Tables tables, long long* __restrict__ keys_out, long long* __restrict__ values_out,
                        std::size_t capacity, unsigned long long* count) {
  unsigned s = 0;  // the block's sub-table, the same for all its threads
  // BEGIN SOLUTION
  while (s + 1 < tables.count && blockIdx.x >= tables.first_block[s + 1]) ++s;
  // STARTER:
  // // TODO(4.7): the block's sub-table: the last s < tables.count with
  // // tables.first_block[s] <= blockIdx.x (at most max_sub_tables steps).
  // END SOLUTION
  const Slot* slots = tables.slots[s];
  const unsigned long long n = tables.capacity[s];
  const unsigned lane = lane_id();
  const unsigned warp = warp_id();
  const unsigned long long chunk = ((blockIdx.x - tables.first_block[s]) * kWarps + warp) * kChunk;
  Slot slot[kRounds];
#pragma unroll
  for (int r = 0; r < kRounds; ++r) slot[r] = read_slot(slots, chunk + 32ull * r + lane, n);

  // BEGIN SOLUTION
  // live[r]: whether slot[r] holds a pair, computed where the aggregation
  // reads it (in the round's ballot), not stored beforehand.
  struct Live {
    const Slot* slot;
    __device__ bool operator[](int r) const { return is_live(slot[r].key); }
  } live{slot};
  // 4.4's warp aggregation, given: one atomicAdd per warp for its live slots.
  warp_aggregated_append(slot, live, PairOutput{keys_out, values_out}, capacity, count);
  // STARTER:
  // // TODO(4.7): a slot is live when is_live(slot[r].key); append the live
  // // slots of the warp's rounds to PairOutput{keys_out, values_out} with the
  // // given warp_aggregated_append (4.4's aggregation, cudalab/warp_aggregated.cuh),
  // // whose selected[r] may be a bool array or a type with operator[].
  // END SOLUTION
}

}  // namespace

void retrieve_all(const SubTable* tables, std::size_t num_tables, long long* keys_out, long long* values_out,
                  std::size_t capacity, unsigned long long* count, cudaStream_t stream) {
  const char* fn = "retrieve_all";
  require_pointer(fn, "tables", tables, num_tables);
  if (num_tables > max_sub_tables)
    throw std::invalid_argument(std::string(fn) + ": " + std::to_string(num_tables) + " sub-tables, at most " +
                                std::to_string(max_sub_tables) + " are supported");
  Tables t{};
  t.count = static_cast<unsigned>(num_tables);
  std::size_t slots = 0;
  for (std::size_t s = 0; s < num_tables; ++s) {
    require_pointer(fn, "tables[s].slots", tables[s].slots, tables[s].capacity);
    if (tables[s].capacity > max_slots - slots)
      throw std::invalid_argument(std::string(fn) + ": the sub-tables hold more than max_slots = 2^40 slots");
    slots += tables[s].capacity;
    t.slots[s] = tables[s].slots;
    t.capacity[s] = tables[s].capacity;
    t.first_block[s + 1] = t.first_block[s] + (tables[s].capacity + kTile - 1) / kTile;
  }
  require_pointer(fn, "keys_out", keys_out, capacity);
  require_pointer(fn, "values_out", values_out, capacity);
  require_pointer(fn, "count", count, 1);

  CUDALAB_CHECK(cudaMemsetAsync(count, 0, sizeof(unsigned long long), stream));
  const unsigned long long blocks = t.first_block[num_tables];  // at most 2^29
  if (blocks == 0) return;
  retrieve_all_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(t, keys_out, values_out, capacity,
                                                                               count);
  CUDALAB_CHECK_LAUNCH();
}

}  // namespace cudalab::filter
