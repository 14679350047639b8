// Chapter 6's API as the checker forwards it to the runner: one list per
// exercise, X(return type, namespace, function, (parameters), (arguments)).
// See cudalab/test/remote.hpp. The chapter's types are qualified (the runner
// names each function's type outside its namespace). CsrView and EllView are
// structs of device pointers: they travel as their bytes; Stats comes back
// as its bytes.
#pragma once

#include "cudalab/sssp.cuh"

#define CUDALAB_REMOTE_SSSP(X, fn, View, graph, Dist)                                               \
  X(cudalab::sssp::Stats, cudalab::sssp, fn,                                                        \
    (cudalab::sssp::View graph, cudalab::sssp::vertex_t source, cudalab::sssp::Dist* dist,          \
     cudaStream_t stream),                                                                          \
    (graph, source, dist, stream))

#define CUDALAB_REMOTE_dijkstra_parallel_extract_min(X) \
  CUDALAB_REMOTE_SSSP(X, dijkstra_parallel_extract_min, CsrView, graph, dist_t)
#define CUDALAB_REMOTE_bellman_ford_edge_parallel(X) \
  CUDALAB_REMOTE_SSSP(X, bellman_ford_edge_parallel, CsrView, graph, signed_dist_t)
#define CUDALAB_REMOTE_bellman_ford_worklist(X) \
  CUDALAB_REMOTE_SSSP(X, bellman_ford_worklist, CsrView, graph, signed_dist_t)
#define CUDALAB_REMOTE_delta_stepping(X)                                                            \
  X(cudalab::sssp::Stats, cudalab::sssp, delta_stepping,                                            \
    (cudalab::sssp::CsrView graph, cudalab::sssp::vertex_t source, cudalab::sssp::dist_t delta,     \
     cudalab::sssp::dist_t* dist, cudalab::sssp::vertex_t* parent, cudaStream_t stream),            \
    (graph, source, delta, dist, parent, stream))
#define CUDALAB_REMOTE_spmv_bellman_ford_csr(X) \
  CUDALAB_REMOTE_SSSP(X, spmv_bellman_ford_csr, CsrView, in_edges, signed_dist_t)
#define CUDALAB_REMOTE_spmv_bellman_ford_ell(X) \
  CUDALAB_REMOTE_SSSP(X, spmv_bellman_ford_ell, EllView, in_edges, signed_dist_t)
