// Benchmark of cudalab::kdtree::segmented_split (7.4) on one level of
// 2,000,000 and 2^24 uniform points in 4096 nodes, beside the chapter's
// baselines (a CUB segmented scan of the same level) in the same run. Every
// call gets a new layout of the level (segments in a new order, a new
// working array: refresh_level) and new flags, 0 or 1 with probability 1/2;
// the last call's output is checked against a plain stable partition of
// every segment, one thread per node.
#include <cstddef>
#include <string>

#include "kdtree_bench.cuh"

namespace {
using cudalab::bench::kdtree::DeviceLevel;
using cudalab::kdtree::Node;

// Thread k: segment k of `in` stably partitioned by the flags, left entries first.
__global__ void expected_split_kernel(const std::uint32_t* in, const std::uint8_t* flags, const Node* nodes,
                                      const int* active, std::size_t m, std::uint32_t* out) {
  const std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (k >= m) return;
  const Node v = nodes[active[k]];
  const std::size_t end = static_cast<std::size_t>(v.begin) + v.count;
  std::size_t o = v.begin;
  for (int side = 0; side < 2; ++side)
    for (std::size_t i = v.begin; i < end; ++i)
      if (flags[i] == side) out[o++] = in[i];
}

// "" when the last call's output is every segment stably partitioned, else the first difference.
std::string check_split(DeviceLevel& L) {
  std::uint32_t* want = cudalab::bench::kdtree::sized(L.expected_idx, L.n).data();
  expected_split_kernel<<<static_cast<unsigned>((L.m + 255) / 256), 256>>>(L.work.data(), L.flags.data(),
                                                                           L.nodes.data(), L.active.data(), L.m, want);
  CUDALAB_CHECK_LAUNCH();
  CUDALAB_CHECK(cudaDeviceSynchronize());
  const std::size_t d = cudalab::bench::kdtree::first_mismatch(L.idx_out.data(), want, L.n);
  if (d == L.n) return "";
  std::uint32_t got = 0, expected = 0;
  CUDALAB_CHECK(cudaMemcpy(&got, L.idx_out.data() + d, sizeof got, cudaMemcpyDeviceToHost));
  CUDALAB_CHECK(cudaMemcpy(&expected, want + d, sizeof expected, cudaMemcpyDeviceToHost));
  return "out[" + std::to_string(d) + "] = " + std::to_string(got) + ", expected " +
         std::to_string(expected) + " (the stable partition of its segment, left entries first)";
}

const bool registered = [] {
  cudalab::bench::kdtree::register_level(
      "segmented_split/uint32",
      [](DeviceLevel& L, cudaStream_t s) {
        cudalab::kdtree::segmented_split(L.work.data(), L.flags.data(), L.n, L.nodes.data(), L.active.data(), L.m,
                                         L.idx_out.data(), s);
      },
      2 * sizeof(std::uint32_t) + sizeof(std::uint8_t),
      {cudalab::bench::kdtree::kPoints, cudalab::bench::kdtree::kLargePoints},
      [](DeviceLevel& L) {
        cudalab::bench::Fresh fresh;
        fresh.refresh = [&L](cudaStream_t s) {
          cudalab::bench::kdtree::refresh_level(L, s, false);
          cudalab::bench::refill_uniform_ints(cudalab::bench::kdtree::sized(L.flags, L.n), std::uint8_t{0},
                                              std::uint8_t{1}, s);
        };
        fresh.verify = [&L] { return check_split(L); };
        return fresh;
      });
  return true;
}();
}  // namespace
