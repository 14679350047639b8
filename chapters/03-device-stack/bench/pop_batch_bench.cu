// Benchmark of cudalab::stack::pop_batch at 2^20 and 2^24 items, beside the
// chapter's baselines (bench/stack_baselines_bench.cu) in the same run.
#include "stack_bench.cuh"

namespace {

// "pop_batch/int32/<n>": pop n items from a full stack of n. The counter is
// reset to n before each run by an 8-byte device-to-device copy (timed too).
// Items = pops; bytes = n items read from the slots, n written to out.
// Before every call (untimed) the slots get new items; the last call is
// checked (check_popped: counter 0, no error, out = the slots as a multiset).
const bool registered = [] {
  auto* b = cudalab::bench::register_device_benchmark("pop_batch/int32", [](benchmark::State& state) {
    using namespace cudalab;
    const auto n = static_cast<std::size_t>(state.range(0));
    stack::Stack<int> st(n);
    const DeviceBuffer<long long> full(std::vector<long long>{static_cast<long long>(n)});
    DeviceBuffer<int> out(n);
    const stack::DeviceStack<int> view = st.view();
    bench::Fresh fresh;
    fresh.refresh = [&](cudaStream_t s) { bench::stack::refill_items(view.data, n, s); };
    fresh.verify = [&] { return bench::stack::check_popped(view, n, out.data()); };
    bench::time_runs(
        state,
        [&](cudaStream_t s) {
          CUDALAB_CHECK(cudaMemcpyAsync(view.count, full.data(), sizeof(long long), cudaMemcpyDeviceToDevice, s));
          stack::pop_batch(view, n, out.data(), -1, s);
        },
        2 * n * sizeof(int), n, fresh);
  });
  for (auto n : cudalab::bench::stack::kSizes) b->Arg(n);
  return true;
}();

}  // namespace
