// Baselines of exercise(s) 6.4, linked into their benchmark programs so that
// each run measures them beside the exercise:
//   boost_dijkstra/<graph>/<n>   Boost.Graph's Dijkstra on one host core, on
//                                the same graphs and sources (sssp_baselines.cuh)
//   copy_bandwidth/int32/<n>     device-to-device copy: the memory ceiling
#include "sssp_baselines.cuh"

namespace cudalab::bench::sssp {
namespace {
const bool registered = [] {
  register_boost_dijkstra(delta_graphs());
  register_copy_bandwidth<int>("int32", {1 << 24, 1 << 26});
  return true;
}();
}  // namespace
}  // namespace cudalab::bench::sssp
