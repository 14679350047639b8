#pragma once
/// @file edge_limit_graph.cuh
/// @brief The graph of the LargeIndex tests of chapters 5 and 6: a source
/// whose out-edges are the last edges of a graph of \f$2^{32} - 1\f$ edges,
/// the most that 32-bit row offsets (cudalab::graph::offset_t) allow, built
/// without its 32 GiB (cudalab/test/sparse_device_array.cuh).
///
/// **The graph.** n = 3 vertices, m = kMaxEdges = \f$2^{32} - 1\f$ edges,
/// row_offsets = {0, m - K, m, m}:
/// - vertex 0 owns the edges [0, m - K) and is unreachable (no edge leads
///   to it);
/// - vertex 1, the source, owns the last K edges [m - K, m), all to vertex
///   2, of weight 5 but the last (index m - 1 = \f$2^{32} - 2\f$), of weight 3;
/// - vertex 2 owns none.
///
/// Expected distances: vertex 0 unreachable, the source 0, vertex 2 3.
/// The heads and weights are sparse arrays: only the last allocation
/// granule of each (2 MiB: the last 524,288 edges on current GPUs) has
/// memory. The edges of vertex 0 in it lead to vertex 2 with weight 1: a
/// kernel that relaxes one of them as one of the source's gives vertex 2
/// the distance 1.
///
/// **Why a correct kernel touches only the memory that exists.** It reads
/// row_offsets (an ordinary buffer), then the edges of the vertices it
/// reaches, and no others: the source's K edges [m - K, m) have memory,
/// since a SparseDeviceArray backs at least the last K elements it is asked
/// for (K is 2, 40 or 300 in the tests: 1200 bytes at most, in the last
/// granule). Vertex 0 is never reached, so none of its edges is read;
/// vertex 2 has none (row_offsets[2] = row_offsets[3] = m).
///
/// **What a wrong one does.** With a 32-bit index, `row_offsets[1] + lane`
/// = m - K + lane is \f$2^{32} - 1 - K + \mathit{lane}\f$, which wraps for
/// lane > K to lane - K - 1, a small index; `e += stride` past
/// \f$2^{32} - 1\f$ wraps to below the stride. Both are below m, so the loop
/// goes on and reads an edge among the first few hundred, whose addresses
/// have no memory: the kernel faults (cudaErrorIllegalAddress), and the
/// test fails with that. A bound computed in 32 bits as
/// `row_offsets[u + 1] + 1` wraps to 0 and relaxes nothing: vertex 2 stays
/// unreachable.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "cudalab/device_buffer.cuh"
#include "cudalab/graph/csr.cuh"
#include "cudalab/graph/dijkstra_reference.hpp"
#include "cudalab/test/harness.hpp"
#include "cudalab/test/sparse_device_array.cuh"

namespace cudalab::test {

/// @brief What a test of a wrapped edge index tells the student: the likely
/// mistake and its fix.
inline constexpr const char* kWrappedEdgeIndexAdvice =
    "An edge index computed in 32 bits as row_offsets[u] + lane (or row_offsets[u] + threadIdx.x, or "
    "e += stride) wraps past 2^32 - 1 to a small number: the loop then reads edges of other vertices, or "
    "starts again from edge 0. Use a 64-bit index: std::size_t e = row_offsets[u] + lane, compared with "
    "row_offsets[u + 1].";

/// @brief The LargeIndex graph (see the file comment), on the device. Owning,
/// neither copyable nor movable.
class EdgeLimitGraph {
 public:
  /// m: every edge that 32-bit row offsets can index.
  static constexpr std::size_t kEdges = graph::kMaxEdges;
  /// The source.
  static constexpr graph::vertex_t kSource = 1;
  /// The weight of the source's edges but the last.
  static constexpr graph::weight_t kWeight = 5;
  /// The weight of the source's last edge (index m - 1): vertex 2's distance.
  static constexpr graph::weight_t kLastWeight = 3;
  /// The weight of vertex 0's edges that have memory (to vertex 2).
  static constexpr graph::weight_t kTrapWeight = 1;
  /// The largest source degree: the source's edges must fit the last granule.
  static constexpr std::size_t kMaxSourceEdges = 4096;

  /// @brief Builds the graph with a source of `source_edges` out-edges K.
  /// @throws std::invalid_argument when K is 0 or above kMaxSourceEdges
  /// @throws cudalab::CudaError when an allocation or a copy fails
  explicit EdgeLimitGraph(std::size_t source_edges)
      : k_(checked(source_edges)),
        row_offsets_(std::vector<graph::offset_t>{0, static_cast<graph::offset_t>(kEdges - k_),
                                                  static_cast<graph::offset_t>(kEdges),
                                                  static_cast<graph::offset_t>(kEdges)}),
        heads_(kEdges, k_),
        weights_(kEdges, k_) {
    // Every edge with memory: vertex 0's (the trap) up to m - K, then the source's.
    const auto fill = [this](std::size_t first, auto value) {
      std::vector<decltype(value(std::size_t{0}))> tail(kEdges - first);
      for (std::size_t e = first; e < kEdges; ++e) tail[e - first] = value(e);
      return tail;
    };
    heads_.upload_tail(fill(heads_.first_backed(), [](std::size_t) { return graph::vertex_t{2}; }));
    weights_.upload_tail(fill(weights_.first_backed(), [this](std::size_t e) {
      return e < kEdges - k_ ? kTrapWeight : e + 1 < kEdges ? kWeight : kLastWeight;
    }));
  }

  /// @return the view the exercises take (no negative weight).
  graph::CsrView view() const noexcept {
    return graph::CsrView{3, kEdges, row_offsets_.data(), heads_.data(), weights_.data(), false};
  }
  /// @return K, the source's out-degree.
  std::size_t source_edges() const noexcept { return k_; }
  /// @return the first edge with memory (the same in both arrays).
  std::size_t first_backed() const noexcept { return heads_.first_backed(); }

  /// @return the graph in words, for failure messages.
  std::string describe() const {
    const std::string m = std::to_string(kEdges);
    const std::string k = std::to_string(k_);
    return "n = 3, m = 2^32 - 1 = " + m + " edges (the most 32-bit row offsets allow), row_offsets = {0, m - " + k +
           ", m, m}: vertex 0 (unreachable) owns edges [0, m - " + k + "), the source (vertex 1) owns the last " + k +
           " edges [m - " + k + ", m), all to vertex 2, of weight " + std::to_string(kWeight) +
           " but the last (index " + std::to_string(kEdges - 1) + ", weight " + std::to_string(kLastWeight) +
           "); only edges " + std::to_string(first_backed()) + " to m - 1 have memory in this test. ";
  }

  /// @return the expected distances, widened (graph::kUnreachable for vertex 0).
  static std::vector<graph::dist64_t> expected() { return {graph::kUnreachable, 0, kLastWeight}; }

  /// @brief "" when `got` (the three distances, widened: graph::kUnreachable
  /// for an unreachable vertex) are the expected ones, else what is wrong and
  /// the likely mistake.
  std::string distance_error(const std::vector<graph::dist64_t>& got) const {
    const std::vector<graph::dist64_t> want = expected();
    if (got.size() != want.size()) return "test bug: " + std::to_string(got.size()) + " distances, not 3";
    if (got == want) return {};
    const auto show = [](graph::dist64_t d) {
      if (d == graph::kUnreachable) return std::string("unreachable");
      if (static_cast<std::uint64_t>(d) == 0xA5A5A5A5A5A5A5A5ull || d == graph::dist64_t{0xA5A5A5A5u})
        return std::to_string(d) + " (the poison 0xA5...: never written)";
      return std::to_string(d);
    };
    const std::string distances = "expected distances {unreachable, 0, " + std::to_string(kLastWeight) +
                                  "}, got {" + show(got[0]) + ", " + show(got[1]) + ", " + show(got[2]) + "}. ";
    if (got[1] != 0) return distances + "The source's distance is 0.";
    if (got[2] == graph::kUnreachable)
      return distances +
             "Vertex 2 was never reached: none of the source's edges was relaxed. A loop bound computed in 32 "
             "bits, such as row_offsets[u + 1] + 1, wraps to 0 when u's edges end at 2^32 - 1, and so does an "
             "index that wrapped before the loop's first test. " + std::string(kWrappedEdgeIndexAdvice);
    if (got[2] == kWeight)
      return distances + "Vertex 2 got the weight of the source's first edges: its last edge (index " +
             std::to_string(kEdges - 1) + ", weight " + std::to_string(kLastWeight) +
             ") was never relaxed, so the loop over the edges stopped early. " + kWrappedEdgeIndexAdvice;
    if (got[2] == kTrapWeight)
      return distances + "Vertex 2 got " + std::to_string(kTrapWeight) +
             ", the weight of vertex 0's edges: an edge of vertex 0, which the source cannot reach, was relaxed "
             "as one of the source's. " + kWrappedEdgeIndexAdvice;
    if (got[0] != graph::kUnreachable)
      return distances + "Vertex 0 is unreachable: no edge leads to it, so its distance must stay infinite. " +
             kWrappedEdgeIndexAdvice;
    return distances + kWrappedEdgeIndexAdvice;
  }

  /// @return the message for a call that threw or faulted on this graph.
  std::string call_failure(const std::string& what) const {
    return describe() + "The call failed: " + what +
           "\nEvery edge below index " + std::to_string(first_backed()) +
           " has no memory here, so a kernel that reads one faults (an illegal address). " +
           kWrappedEdgeIndexAdvice;
  }

 private:
  static std::size_t checked(std::size_t k) {
    if (k == 0 || k > kMaxSourceEdges)
      throw std::invalid_argument("EdgeLimitGraph: the source's degree must be in [1, " +
                                  std::to_string(kMaxSourceEdges) + "], not " + std::to_string(k));
    return k;
  }

  std::size_t k_;
  DeviceBuffer<graph::offset_t> row_offsets_;
  SparseDeviceArray<graph::vertex_t> heads_;
  SparseDeviceArray<graph::weight_t> weights_;
};

/// @brief The source degrees K the LargeIndex tests try: 2 (fewer than a
/// warp: lanes or threads 3 and up start past the end, and wrap), 40 (more
/// than a warp: a warp's second batch, or e += 32, wraps) and 300 (more than
/// a block of 256 threads: e += blockDim.x wraps).
inline const std::vector<std::size_t> kEdgeLimitDegrees = {2, 40, 300};

/// @brief The name of one LargeIndex case: "k" and the source's degree.
inline std::string edge_limit_degree_name(const ::testing::TestParamInfo<std::size_t>& info) {
  return "k" + std::to_string(info.param);
}

/// @brief Why the LargeIndex graph cannot be used here, or "" when it can:
/// under a sanitizer's size cap (m is above CUDALAB_MAX_N), or on a device
/// without virtual memory management (sparse_arrays_unsupported()). For
/// GTEST_SKIP in a test's own body.
/// @throws cudalab::CudaError when a CUDA query fails
inline std::string edge_limit_graph_unavailable() {
  if (EdgeLimitGraph::kEdges > max_n())
    return "m = " + std::to_string(EdgeLimitGraph::kEdges) + " edges is above CUDALAB_MAX_N = " +
           std::to_string(max_n());
  return sparse_arrays_unsupported();
}

}  // namespace cudalab::test
