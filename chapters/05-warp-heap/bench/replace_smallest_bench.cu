// Benchmark of cudalab::heap::replace_smallest (5.1) on 2^16 and 2^20 nodes,
// beside the copy bandwidth of the same bytes (bench/heap_baselines_bench.cu).
#include <string>
#include <vector>

#include "heap_bench.cuh"

namespace {

using cudalab::bench::heap::detail::mix;
using cudalab::heap::entry_less;
using cudalab::heap::node_size;

// The inputs of one call, from (seed, index) alone, so that the check can
// rebuild them after the nodes were updated in place. Node w, lane l: key
// 64 l + r with r uniform in [0, 64) (strictly increasing across the lanes),
// value uniform in [0, 2^20). x[w]: key uniform in [0, 2112) (below the
// top, amid the node or above it; equal to a node's key at times, when the
// value decides), value uniform in [0, 2^20).
constexpr std::uint64_t kXStream = 0x785F6B6579ull;
__device__ inline float node_key(std::uint64_t seed, std::size_t i) {
  return static_cast<float>(64 * (i % node_size) + (mix(seed, 2 * i) & 63));
}
__device__ inline int node_value(std::uint64_t seed, std::size_t i) {
  return static_cast<int>(mix(seed, 2 * i + 1) & 0xFFFFF);
}
__device__ inline float x_key(std::uint64_t seed, std::size_t w) {
  return static_cast<float>(mix(seed ^ kXStream, 2 * w) % (64 * (node_size + 1)));
}
__device__ inline int x_value(std::uint64_t seed, std::size_t w) {
  return static_cast<int>(mix(seed ^ kXStream, 2 * w + 1) & 0xFFFFF);
}

__global__ void fill_nodes_kernel(float* keys, int* values, std::size_t n, float* xk, int* xv, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n * node_size;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    keys[i] = node_key(seed, i);
    values[i] = node_value(seed, i);
    if (i % node_size == 0) {
      xk[i / node_size] = x_key(seed, i / node_size);
      xv[i / node_size] = x_value(seed, i / node_size);
    }
  }
}

// One warp per node: rebuilds node w and x[w] from the seed, and compares
// the node and the evicted entry with the contract's: x before the top: the
// node unchanged, x evicted; else the top evicted and x inserted in order
// among the other 31 (after the p entries that order before it). Counts the
// wrong nodes.
__global__ void check_nodes_kernel(const float* keys, const int* values, std::size_t n, const float* ek,
                                   const int* ev, std::uint64_t seed, unsigned long long* wrong) {
  const unsigned lane = threadIdx.x % 32;
  const std::size_t warps = static_cast<std::size_t>(gridDim.x) * (blockDim.x / 32);
  for (std::size_t w = (blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x) / 32; w < n; w += warps) {
    const std::size_t i = w * node_size + lane;
    const float k = node_key(seed, i), xk = x_key(seed, w);
    const int v = node_value(seed, i), xv = x_value(seed, w);
    const float top_k = __shfl_sync(0xffffffffu, k, 0);
    const int top_v = __shfl_sync(0xffffffffu, v, 0);
    const bool x_first = entry_less(xk, xv, top_k, top_v);
    // p = the entries of lanes 1 .. 31 that order before x (a prefix: the node is sorted).
    const unsigned before = __ballot_sync(0xffffffffu, lane > 0 && entry_less(k, v, xk, xv));
    const unsigned p = static_cast<unsigned>(__popc(before));
    const float next_k = __shfl_down_sync(0xffffffffu, k, 1);
    const int next_v = __shfl_down_sync(0xffffffffu, v, 1);
    float want_k = k;
    int want_v = v;
    if (!x_first) {
      if (lane < p) {
        want_k = next_k;
        want_v = next_v;
      } else if (lane == p) {
        want_k = xk;
        want_v = xv;
      }
    }
    bool ok = keys[i] == want_k && values[i] == want_v;
    if (lane == 0) ok = ok && ek[w] == (x_first ? xk : top_k) && ev[w] == (x_first ? xv : top_v);
    if (__any_sync(0xffffffffu, !ok) && lane == 0) atomicAdd(wrong, 1ull);
  }
}

// "replace_smallest/float32/<nodes>": one warp per node. New nodes and new
// x before every call (the nodes, updated in place, are written anew);
// the last call's nodes and evicted entries are checked. Items = nodes;
// bytes = nodes read and written (2 x 256 B each) plus x read and the
// evicted entry written (16 B).
const bool registered = [] {
  auto* b = benchmark::RegisterBenchmark("replace_smallest/float32", [](benchmark::State& state) {
    using namespace cudalab;
    if (!bench::require_device(state)) return;
    const auto n = static_cast<std::size_t>(state.range(0));
    DeviceBuffer<float> d_keys(n * node_size), d_xk(n), d_ek(n);
    DeviceBuffer<int> d_values(n * node_size), d_xv(n), d_ev(n);
    std::uint64_t seed = 0;
    bench::Fresh fresh;
    fresh.refresh = [&](cudaStream_t s) {
      seed = bench::next_seed();
      fill_nodes_kernel<<<4 * sm_count(), 256, 0, s>>>(d_keys.data(), d_values.data(), n, d_xk.data(),
                                                        d_xv.data(), seed);
      CUDALAB_CHECK_LAUNCH();
    };
    fresh.verify = [&]() -> std::string {
      DeviceBuffer<unsigned long long> wrong(std::vector<unsigned long long>{0});
      check_nodes_kernel<<<4 * sm_count(), 256>>>(d_keys.data(), d_values.data(), n, d_ek.data(), d_ev.data(),
                                                   seed, wrong.data());
      CUDALAB_CHECK_LAUNCH();
      const unsigned long long w = wrong.download()[0];
      return w == 0 ? "" : std::to_string(w) + " of " + std::to_string(n) + " nodes or evicted entries are wrong";
    };
    bench::time_runs(
        state,
        [&](cudaStream_t s) {
          heap::replace_smallest(d_keys.data(), d_values.data(), n, d_xk.data(), d_xv.data(), d_ek.data(),
                                 d_ev.data(), s);
        },
        n * (2 * node_size * 8 + 16), n, fresh);
  });
  for (auto n : cudalab::bench::heap::kNodeSizes) b->Arg(n);
  b->UseManualTime()->Unit(benchmark::kMicrosecond);
  return true;
}();

}  // namespace
