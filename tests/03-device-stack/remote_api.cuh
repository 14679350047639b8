// Chapter 3's API as the checker forwards it to the runner: one list per
// exercise, X(return type, namespace, function, (parameters), (arguments)).
// See cudalab/test/remote.hpp. The chapter's types are qualified (the runner
// names each function's type outside its namespace). The stack and queue
// views are structs of device pointers: they travel as their bytes.
#pragma once

#include "cudalab/stack.cuh"

#define CUDALAB_REMOTE_PUSH(X, fn)                                                                 \
  X(void, cudalab::stack, fn,                                                                      \
    (cudalab::stack::DeviceStack<int> stack, const int* items, const std::uint8_t* push_flags,     \
     std::size_t n, cudaStream_t stream),                                                          \
    (stack, items, push_flags, n, stream))

#define CUDALAB_REMOTE_push_atomic(X) CUDALAB_REMOTE_PUSH(X, push_atomic)
#define CUDALAB_REMOTE_push_warp_aggregated(X) CUDALAB_REMOTE_PUSH(X, push_warp_aggregated)
#define CUDALAB_REMOTE_pop_batch(X)                                                                \
  X(void, cudalab::stack, pop_batch,                                                               \
    (cudalab::stack::DeviceStack<int> stack, std::size_t count, int* out, int empty,               \
     cudaStream_t stream),                                                                         \
    (stack, count, out, empty, stream))
#define CUDALAB_REMOTE_expand_until_empty(X)                                                       \
  X(std::vector<std::size_t>, cudalab::stack, expand_until_empty,                                  \
    (const int* roots, std::size_t n_roots, cudalab::stack::TreeRule rule, int* visited,           \
     std::size_t visited_capacity, cudaStream_t stream),                                           \
    (roots, n_roots, rule, visited, visited_capacity, stream))
#define CUDALAB_REMOTE_ring_queue(X)                                                               \
  X(void, cudalab::stack, ring_queue_enqueue,                                                      \
    (cudalab::stack::DeviceQueue<int> queue, const int* items, const std::uint8_t* push_flags,     \
     std::size_t n, cudaStream_t stream),                                                          \
    (queue, items, push_flags, n, stream))                                                         \
  X(void, cudalab::stack, ring_queue_dequeue,                                                      \
    (cudalab::stack::DeviceQueue<int> queue, std::size_t count, int* out, int empty,               \
     cudaStream_t stream),                                                                         \
    (queue, count, out, empty, stream))
