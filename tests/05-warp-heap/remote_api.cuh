// Chapter 5's API as the checker forwards it to the runner: one list per
// exercise, X(return type, namespace, function, (parameters), (arguments)).
// See cudalab/test/remote.hpp. The chapter's types are qualified (the runner
// names each function's type outside its namespace). HeapStorageView and
// CsrView are structs of device pointers: they travel as their bytes.
#pragma once

#include "cudalab/heap.cuh"

#define CUDALAB_REMOTE_replace_smallest(X)                                                          \
  X(void, cudalab::heap, replace_smallest,                                                          \
    (float* node_keys, int* node_values, std::size_t n_nodes, const float* x_keys, const int* x_values, \
     float* evicted_keys, int* evicted_values, cudaStream_t stream),                                \
    (node_keys, node_values, n_nodes, x_keys, x_values, evicted_keys, evicted_values, stream))
#define CUDALAB_REMOTE_min_child(X)                                                                 \
  X(void, cudalab::heap, min_child,                                                                 \
    (const float* top_keys, const int* top_values, std::size_t node_count, const int* parents,     \
     std::size_t n_queries, int* children, cudaStream_t stream),                                    \
    (top_keys, top_values, node_count, parents, n_queries, children, stream))
#define CUDALAB_REMOTE_warp_heap(X)                                                                 \
  X(void, cudalab::heap, warp_heap,                                                                 \
    (cudalab::heap::HeapStorageView storage, const cudalab::heap::HeapOp* ops, std::size_t ops_per_heap, \
     std::size_t n_heaps, cudalab::heap::HeapStep* steps, cudaStream_t stream),                     \
    (storage, ops, ops_per_heap, n_heaps, steps, stream))
#define CUDALAB_REMOTE_dijkstra_warp_heap(X)                                                        \
  X(void, cudalab::heap, dijkstra_warp_heap,                                                        \
    (cudalab::graph::CsrView graph, const cudalab::graph::vertex_t* sources, std::size_t n_sources, \
     const cudalab::graph::vertex_t* targets, std::size_t n_targets, cudalab::graph::dist64_t* distances, \
     unsigned* flags, cudalab::heap::HeapStorageView storage, cudalab::graph::dist64_t* scratch,   \
     cudaStream_t stream),                                                                          \
    (graph, sources, n_sources, targets, n_targets, distances, flags, storage, scratch, stream))
