// Baselines of chapter 5, linked into every exercise's benchmark program so
// that each run measures them beside the exercise:
//   copy_bandwidth/int32/<n>                     device-to-device copy: 5.1 moves as many bytes as a copy
//                                                of 64 ints per node, 5.2 as one of 32 ints per query
//   binary_heap_per_thread/float32/<n>/<heaps>   the scripts of 5.3 (n pushes, then n pops, per heap), one
//                                                thread per heap, each a textbook binary heap in global memory;
//                                                like warp_heap: new keys before every call, the last steps
//                                                checked (fresh_scripts in heap_bench.cuh)
#include <climits>

#include "heap_bench.cuh"

namespace cudalab::bench::heap {
namespace {

using cudalab::heap::Entry;

// Thread t runs script t on its own binary heap (capacity `capacity`
// entries) with the semantics of cudalab::heap::warp_heap: same order, same
// flags, same records. Entry j of heap t lives at j * heaps + t, so the
// threads of a warp touching the same level hit neighbouring words.
__global__ void binary_heap_kernel(const HeapOp* __restrict__ ops, std::size_t len, std::size_t heaps,
                                   std::size_t capacity, float* __restrict__ keys, int* __restrict__ values,
                                   HeapStep* __restrict__ steps) {
  const std::size_t t = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (t >= heaps) return;
  auto at = [&](std::size_t j) { return j * heaps + t; };
  std::size_t size = 0;
  for (std::size_t i = 0; i < len; ++i) {
    const HeapOp op = ops[t * len + i];
    HeapStep s{cudalab::heap::kEmptyKey, cudalab::heap::kEmptyValue, cudalab::heap::kEmptyKey,
               cudalab::heap::kEmptyValue, 0, 0u};
    if (op.kind == OpKind::push) {
      if (!(op.key < cudalab::heap::kEmptyKey)) {
        s.flags = cudalab::heap::kInvalidKey;
      } else if (size >= capacity) {
        s.flags = cudalab::heap::kOverflow;
      } else {
        const Entry x{op.key, op.value};
        std::size_t j = size++;
        while (j > 0) {  // sift up
          const std::size_t p = (j - 1) / 2;
          const Entry pe{keys[at(p)], values[at(p)]};
          if (!(x < pe)) break;
          keys[at(j)] = pe.key;
          values[at(j)] = pe.value;
          j = p;
        }
        keys[at(j)] = x.key;
        values[at(j)] = x.value;
      }
    } else if (size == 0) {
      s.flags = cudalab::heap::kUnderflow;
    } else {
      s.key = keys[at(0)];
      s.value = values[at(0)];
      const Entry x{keys[at(size - 1)], values[at(size - 1)]};
      --size;
      std::size_t j = 0;
      for (;;) {  // sift down
        std::size_t c = 2 * j + 1;
        if (c >= size) break;
        Entry ce{keys[at(c)], values[at(c)]};
        if (c + 1 < size) {
          const Entry r{keys[at(c + 1)], values[at(c + 1)]};
          if (r < ce) {
            ce = r;
            ++c;
          }
        }
        if (!(ce < x)) break;
        keys[at(j)] = ce.key;
        values[at(j)] = ce.value;
        j = c;
      }
      if (size > 0) {
        keys[at(j)] = x.key;
        values[at(j)] = x.value;
      }
    }
    if (size > 0) {
      s.top_key = keys[at(0)];
      s.top_value = values[at(0)];
    }
    s.size = static_cast<int>(size);
    steps[t * len + i] = s;
  }
}

const bool registered = [] {
  register_copy_bandwidth<int>("int32", {32 << 16, 64 << 16, 32 << 20, 64 << 20});
  auto* b = benchmark::RegisterBenchmark("binary_heap_per_thread/float32", [](benchmark::State& state) {
    if (!require_device(state)) return;
    const auto n = static_cast<std::size_t>(state.range(0));
    const auto heaps = static_cast<std::size_t>(state.range(1));
    DeviceBuffer<HeapOp>& ops = scripts(n, heaps);
    DeviceBuffer<HeapStep> steps(2 * n * heaps);
    const std::size_t capacity = capacity_for(n) * cudalab::heap::node_size;  // the warp heap's capacity
    DeviceBuffer<float> keys(capacity * heaps);
    DeviceBuffer<int> values(capacity * heaps);
    constexpr int kBlock = 128;
    const auto blocks = static_cast<unsigned>((heaps + kBlock - 1) / kBlock);
    time_runs(
        state,
        [&](cudaStream_t s) {
          binary_heap_kernel<<<blocks, kBlock, 0, s>>>(ops.data(), 2 * n, heaps, capacity, keys.data(),
                                                       values.data(), steps.data());
          CUDALAB_CHECK_LAUNCH();
        },
        script_bytes(2 * n * heaps), 2 * n * heaps, fresh_scripts(ops, steps, n, heaps));
  });
  for (const auto& [n, heaps] : kHeapShapes) b->Args({n, heaps});
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
  return true;
}();

}  // namespace
}  // namespace cudalab::bench::heap
