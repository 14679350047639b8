// Benchmark of cudalab::stack::ring_queue_enqueue and ring_queue_dequeue at
// 2^20 and 2^24 items, beside the chapter's baselines
// (bench/stack_baselines_bench.cu) in the same run.
#include "stack_bench.cuh"

namespace {

// "ring_queue/int32/<n>": into an empty queue of capacity n whose head and
// tail stand at 2^32 - n/2 (so the slots wrap around), enqueue n items (one
// launch), then dequeue n (a second launch). The counters are reset by a
// 16-byte device-to-device copy before each run (timed too).
// Items = n (each goes in and out); bytes = 4 x 4n (items read, slots
// written, slots read, outputs written). New items before every call
// (untimed); the last call is checked (check_dequeued: head = tail =
// 2^32 + n/2, no error, out = the items as a multiset).
const bool registered = [] {
  auto* b = cudalab::bench::register_device_benchmark("ring_queue/int32", [](benchmark::State& state) {
    using namespace cudalab;
    const auto n = static_cast<std::size_t>(state.range(0));
    stack::Queue<int> q(n);
    DeviceBuffer<int>& in = bench::stack::items(n);
    const unsigned long long start = (1ull << 32) - n / 2;
    const DeviceBuffer<unsigned long long> reset(std::vector<unsigned long long>{start, start});
    DeviceBuffer<int> out(n);
    const stack::DeviceQueue<int> view = q.view();
    bench::Fresh fresh;
    fresh.refresh = [&](cudaStream_t s) { bench::stack::refill_items(in.data(), n, s); };
    fresh.verify = [&] { return bench::stack::check_dequeued(view, in.data(), n, start + n, out.data()); };
    bench::time_runs(
        state,
        [&](cudaStream_t s) {
          CUDALAB_CHECK(cudaMemcpyAsync(view.head, reset.data(), 2 * sizeof(unsigned long long),
                                        cudaMemcpyDeviceToDevice, s));
          stack::ring_queue_enqueue(view, in.data(), nullptr, n, s);
          stack::ring_queue_dequeue(view, n, out.data(), -1, s);
        },
        4 * n * sizeof(int), n, fresh);
  });
  for (auto n : cudalab::bench::stack::kSizes) b->Arg(n);
  return true;
}();

}  // namespace
