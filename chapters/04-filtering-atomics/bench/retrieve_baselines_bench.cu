// Baselines of exercise 4.7, linked into its benchmark program so that each
// run measures them beside the exercise:
//   cub_select_live/int64/<slots>    cub::DeviceSelect::If over the whole slot array (one call:
//                                    the benchmark's sub-tables lie back to back, which the
//                                    exercise may not assume) with the predicate "key is live",
//                                    writing the live slots as 16-byte pairs: the same bytes
//                                    as retrieve_all's separate keys and values; new keys before
//                                    every call, the last output checked (as retrieve_all)
//   copy_bandwidth/int64/<2 slots>   device-to-device copy of as many bytes as the slots hold
#include <cub/device/device_select.cuh>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "retrieve_bench.cuh"

namespace cudalab::bench::retrieve {
namespace {

struct LiveSlot {
  __host__ __device__ bool operator()(const cudalab::filter::Slot& s) const { return cudalab::filter::is_live(s.key); }
};

// The output of cub_select_live for the table of n slots.
DeviceBuffer<cudalab::filter::Slot>& output(std::size_t n) {
  static std::map<std::size_t, DeviceBuffer<cudalab::filter::Slot>> outputs;
  return outputs.try_emplace(n, n).first->second;
}

void cub_select_live(std::size_t n, cudaStream_t stream) {
  DeviceBuffer<cudalab::filter::Slot>& out = output(n);
  const cudalab::filter::Slot* in = table(n).data();
  std::size_t bytes = 0;
  CUDALAB_CHECK(cub::DeviceSelect::If(nullptr, bytes, in, out.data(), count(), static_cast<std::int64_t>(n),
                                      LiveSlot{}, stream));
  CUDALAB_CHECK(cub::DeviceSelect::If(temp_storage(bytes), bytes, in, out.data(), count(),
                                      static_cast<std::int64_t>(n), LiveSlot{}, stream));
}

const bool registered = [] {
  register_retrieve("cub_select_live", cub_select_live,
                    [](std::size_t n) { return check_retrieved(n, SlotPairs{output(n).data()}); });
  register_copy_bandwidth<long long>("int64", {4000000, 400000000});
  return true;
}();

}  // namespace
}  // namespace cudalab::bench::retrieve
