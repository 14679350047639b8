// Chapter 7's API as the checker forwards it to the runner: one list per
// exercise, X(return type, namespace, function, (parameters), (arguments)).
// See cudalab/test/remote.hpp. The chapter's types are qualified (the runner
// names each function's type outside its namespace). Node pointers and the
// chapter 3 stack views travel as their bytes; build_large_nodes's
// LargeNodeStage holds a std::vector, so it has its own Ret below.
#pragma once

#include <cstdint>
#include <vector>

#include "cudalab/kdtree.cuh"
#include "cudalab/test/remote.hpp"

#define CUDALAB_REMOTE_bounding_box(X)                                                              \
  X(void, cudalab::kdtree, bounding_box,                                                            \
    (const float3* points, std::size_t n, cudalab::kdtree::Box* box, std::uint64_t* first_bad,      \
     cudaStream_t stream),                                                                          \
    (points, n, box, first_bad, stream))
#define CUDALAB_REMOTE_select_splits(X)                                                             \
  X(void, cudalab::kdtree, select_splits,                                                           \
    (cudalab::kdtree::Node* nodes, const int* active, std::size_t m, cudaStream_t stream),          \
    (nodes, active, m, stream))
#define CUDALAB_REMOTE_classify_and_count(X)                                                        \
  X(void, cudalab::kdtree, classify_and_count,                                                      \
    (const float3* points, const std::uint32_t* idx, std::size_t n, const cudalab::kdtree::Node* nodes, \
     const int* active, std::size_t m, std::uint8_t* right_flags, std::uint32_t* right_counts,      \
     cudaStream_t stream, std::uint32_t* owners),                                                   \
    (points, idx, n, nodes, active, m, right_flags, right_counts, stream, owners))
#define CUDALAB_REMOTE_segmented_split(X)                                                           \
  X(void, cudalab::kdtree, segmented_split,                                                         \
    (const std::uint32_t* in, const std::uint8_t* right_flags, std::size_t n,                       \
     const cudalab::kdtree::Node* nodes, const int* active, std::size_t m, std::uint32_t* out,      \
     cudaStream_t stream, const std::uint32_t* owners),                                             \
    (in, right_flags, n, nodes, active, m, out, stream, owners))
#define CUDALAB_REMOTE_complete_nodes(X)                                                            \
  X(void, cudalab::kdtree, complete_nodes,                                                          \
    (cudalab::stack::DeviceStack<cudalab::kdtree::Node> nodes, const int* active,                   \
     const std::uint32_t* right_counts, std::size_t m, std::size_t threshold, int max_depth,        \
     cudalab::stack::DeviceStack<int> next, cudalab::stack::DeviceStack<int> small,                 \
     unsigned long long* next_points, unsigned long long* small_points, cudaStream_t stream),       \
    (nodes, active, right_counts, m, threshold, max_depth, next, small, next_points, small_points, stream))
#define CUDALAB_REMOTE_build_large_nodes(X)                                                         \
  X(cudalab::kdtree::LargeNodeStage, cudalab::kdtree, build_large_nodes,                            \
    (const float3* points, std::size_t n, std::size_t threshold, int max_depth, cudalab::kdtree::Node* nodes, \
     std::size_t node_capacity, int* small, std::uint32_t* leaf_points, cudaStream_t stream,        \
     bool time_levels),                                                                             \
    (points, n, threshold, max_depth, nodes, node_capacity, small, leaf_points, stream, time_levels))

namespace cudalab::remote {

/// LargeNodeStage: its counts, then its levels as a vector of LevelInfo.
template <>
struct Ret<kdtree::LargeNodeStage> {
  static void put(Writer& w, const kdtree::LargeNodeStage& v) {
    w.put(static_cast<std::uint64_t>(v.nodes));
    w.put(static_cast<std::uint64_t>(v.small));
    w.put(static_cast<std::int64_t>(v.depth));
    Ret<std::vector<kdtree::LevelInfo>>::put(w, v.levels);
  }
  static kdtree::LargeNodeStage get(Reader& r) {
    kdtree::LargeNodeStage v;
    v.nodes = static_cast<std::size_t>(r.get<std::uint64_t>());
    v.small = static_cast<std::size_t>(r.get<std::uint64_t>());
    v.depth = static_cast<int>(r.get<std::int64_t>());
    v.levels = Ret<std::vector<kdtree::LevelInfo>>::get(r);
    return v;
  }
};

}  // namespace cudalab::remote
