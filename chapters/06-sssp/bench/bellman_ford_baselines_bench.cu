// Baselines of exercise(s) 6.2, 6.3, 6.5 and 6.6, linked into their benchmark programs so that
// each run measures them beside the exercise:
//   boost_dijkstra/<graph>/<n>   Boost.Graph's Dijkstra on one host core, on
//                                the same graphs and sources (sssp_baselines.cuh)
//   copy_bandwidth/int32/<n>     device-to-device copy: the memory ceiling
#include "sssp_baselines.cuh"

namespace {
const bool registered = cudalab::bench::sssp::register_baselines(cudalab::bench::sssp::bellman_ford_graphs());
}  // namespace
