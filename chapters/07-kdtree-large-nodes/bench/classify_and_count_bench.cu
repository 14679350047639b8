// Benchmark of cudalab::kdtree::classify_and_count (7.3) on one level of
// 2,000,000 and 2^24 uniform points in 4096 nodes, beside the chapter's
// baselines (a CUB segmented scan of the same level) in the same run. Every
// call gets a new layout of the level (segments in a new order, a new
// working array) and new points in their cells (refresh_level); the last
// call's flags and counts are checked against a plain kernel of the
// contract's rule, one thread per node.
#include <cstddef>
#include <string>

#include "kdtree_bench.cuh"

namespace {
using cudalab::bench::kdtree::DeviceLevel;
using cudalab::kdtree::Node;

// Thread k: the flags of segment k by the contract's rule (coordinate ≥ split) and their sum.
__global__ void expected_classification_kernel(const float3* points, const std::uint32_t* idx, const Node* nodes,
                                               const int* active, std::size_t m, std::uint8_t* flags,
                                               std::uint32_t* counts) {
  const std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (k >= m) return;
  const Node v = nodes[active[k]];
  std::uint32_t right = 0;
  for (std::size_t i = v.begin; i < static_cast<std::size_t>(v.begin) + v.count; ++i) {
    const bool r = cudalab::bench::kdtree::detail::coord(points[idx[i]], v.axis) >= v.split;
    flags[i] = r ? 1 : 0;
    right += r ? 1u : 0u;
  }
  counts[k] = right;
}

// "" when the last call's flags and counts are those of the contract, else the first difference.
std::string check_classification(DeviceLevel& L) {
  using cudalab::bench::kdtree::first_mismatch;
  using cudalab::bench::kdtree::sized;
  std::uint8_t* flags = sized(L.expected_flags, L.n).data();
  std::uint32_t* counts = sized(L.expected_counts, L.m).data();
  expected_classification_kernel<<<static_cast<unsigned>((L.m + 255) / 256), 256>>>(
      L.points.data(), L.work.data(), L.nodes.data(), L.active.data(), L.m, flags, counts);
  CUDALAB_CHECK_LAUNCH();
  CUDALAB_CHECK(cudaDeviceSynchronize());
  const std::size_t i = first_mismatch(L.flags_out.data(), flags, L.n);
  if (i != L.n) {
    std::uint8_t got = 0, want = 0;
    CUDALAB_CHECK(cudaMemcpy(&got, L.flags_out.data() + i, 1, cudaMemcpyDeviceToHost));
    CUDALAB_CHECK(cudaMemcpy(&want, flags + i, 1, cudaMemcpyDeviceToHost));
    return "right_flags[" + std::to_string(i) + "] = " + std::to_string(got) + ", expected " + std::to_string(want);
  }
  const std::size_t k = first_mismatch(L.counts_out.data(), counts, L.m);
  if (k != L.m) {
    std::uint32_t got = 0, want = 0;
    CUDALAB_CHECK(cudaMemcpy(&got, L.counts_out.data() + k, sizeof got, cudaMemcpyDeviceToHost));
    CUDALAB_CHECK(cudaMemcpy(&want, counts + k, sizeof want, cudaMemcpyDeviceToHost));
    return "right_counts[" + std::to_string(k) + "] = " + std::to_string(got) + ", expected " + std::to_string(want);
  }
  return "";
}

const bool registered = [] {
  cudalab::bench::kdtree::register_level(
      "classify_and_count/float3",
      [](DeviceLevel& L, cudaStream_t s) {
        cudalab::kdtree::classify_and_count(L.points.data(), L.work.data(), L.n, L.nodes.data(), L.active.data(), L.m,
                                            L.flags_out.data(), L.counts_out.data(), s);
      },
      sizeof(std::uint32_t) + sizeof(float3) + sizeof(std::uint8_t),
      {cudalab::bench::kdtree::kPoints, cudalab::bench::kdtree::kLargePoints},
      [](DeviceLevel& L) {
        cudalab::bench::Fresh fresh;
        fresh.refresh = [&L](cudaStream_t s) { cudalab::bench::kdtree::refresh_level(L, s, true); };
        fresh.verify = [&L] { return check_classification(L); };
        return fresh;
      });
  return true;
}();
}  // namespace
