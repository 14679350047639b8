// Benchmark of cudalab::kdtree::complete_nodes (7.5) on the 4096 nodes of a
// level of 2,000,000 uniform points (the size in the name is the level's
// point count, as in the other benchmarks of the chapter; items/s counts
// points), beside the chapter's baselines in the same run. Each run resets
// the node stack, the lists and the point counters first (four small
// memsets and a copy, included in the time).
#include "kdtree_bench.cuh"

namespace {
using cudalab::bench::kdtree::DeviceLevel;
using cudalab::kdtree::Node;

const bool registered = [] {
  cudalab::bench::kdtree::register_level(
      "complete_nodes/node",
      [](DeviceLevel& L, cudaStream_t s) {
        static cudalab::stack::Stack<Node> nodes(3 * L.m);
        static cudalab::stack::Stack<int> next(2 * L.m), small(2 * L.m);
        static cudalab::DeviceBuffer<unsigned long long> counters(2);
        static cudalab::DeviceBuffer<std::uint32_t> rights(L.m);
        static const bool filled = [&] {
          CUDALAB_CHECK(cudaMemcpy(nodes.data(), L.nodes.data(), L.m * sizeof(Node), cudaMemcpyDeviceToDevice));
          // Right counts of the level: half of each node's points, about what a median split gives.
          std::vector<Node> host = L.nodes.download();
          std::vector<std::uint32_t> r(L.m);
          for (std::size_t k = 0; k < L.m; ++k) r[k] = host[k].count / 2;
          rights.upload(r);
          return true;
        }();
        (void)filled;
        static const cudalab::DeviceBuffer<long long> used(std::vector<long long>{static_cast<long long>(L.m)});
        CUDALAB_CHECK(cudaMemcpyAsync(nodes.view().count, used.data(), sizeof(long long), cudaMemcpyDeviceToDevice, s));
        next.clear(s);
        small.clear(s);
        counters.fill_bytes(0, s);
        cudalab::kdtree::complete_nodes(nodes.view(), L.active.data(), rights.data(), L.m, 32, 64, next.view(),
                                        small.view(), counters.data(), counters.data() + 1, s);
      },
      0, {cudalab::bench::kdtree::kPoints});
  return true;
}();
}  // namespace
