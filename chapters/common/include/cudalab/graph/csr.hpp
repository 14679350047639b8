/// @file csr.hpp
/// @brief Weighted directed graphs on the host: compressed sparse rows (CSR),
///        built from edge lists, checked, transposed, and converted to a
///        padded column-major ELL layout. Shared by chapters 5 and 6.
///
/// Types (the same on the device, see cudalab/graph/csr.cuh):
/// - a vertex is a cudalab::graph::vertex_t (`int32_t`), 0-based, in [0, n);
/// - an edge weight is a cudalab::graph::weight_t (`int32_t`): signed, so
///   that Bellman-Ford can be given negative weights; the algorithms that
///   need non-negative weights (Dijkstra, delta-stepping) check
///   Csr::has_negative_weights() and reject such graphs;
/// - a row offset is a cudalab::graph::offset_t (`uint32_t`), so a graph has
///   fewer than \f$2^{32}\f$ edges (the largest DIMACS road graph has
///   58,333,344; R-MAT scale 22 with average degree 16 has 67,108,864).
///
/// The layout follows Saad, "Iterative Methods for Sparse Linear Systems",
/// 2nd ed., SIAM 2003, section 3.4 (CSR and ELLPACK-ITPACK formats), and
/// Bell and Garland, "Implementing sparse matrix-vector multiplication on
/// throughput-oriented processors", SC 2009 (ELL stored column-major).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace cudalab::graph {

/// @brief A vertex id, 0-based.
using vertex_t = std::int32_t;
/// @brief An edge weight (a DIMACS arc length, a Matrix Market value): signed 32-bit.
using weight_t = std::int32_t;
/// @brief An index into the edge arrays (a CSR row offset).
using offset_t = std::uint32_t;

/// @brief The largest number of vertices a graph may have (vertex ids fit vertex_t).
inline constexpr std::size_t kMaxVertices = static_cast<std::size_t>(std::numeric_limits<vertex_t>::max());
/// @brief The largest number of edges a graph may have (offsets fit offset_t).
inline constexpr std::size_t kMaxEdges = static_cast<std::size_t>(std::numeric_limits<offset_t>::max());
/// @brief The largest width (entries per row) of an ELL graph, \f$2^{31} - 1\f$:
///        an entry's position in its row fits an int. One ELL row that wide
///        is already 16 GiB of arrays, and every row is padded to it.
inline constexpr std::size_t kMaxEllWidth = static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max());

/// @brief One directed edge `src -> dst` of weight `weight`.
struct Edge {
  vertex_t src;     ///< tail, in [0, n)
  vertex_t dst;     ///< head, in [0, n)
  weight_t weight;  ///< length (may be zero or negative)
};

/// @brief A directed weighted graph in compressed sparse row form.
///
/// The out-edges of vertex `u` are the positions `row_offsets[u]` to
/// `row_offsets[u + 1] - 1` of `col_indices` (heads) and `weights` (lengths),
/// in the order they were given. Self loops and parallel edges are allowed.
/// An empty graph (no vertices) has `row_offsets == {0}`. Memory:
/// \f$4(n + 1) + 8m\f$ bytes for n vertices and m edges.
struct Csr {
  std::vector<offset_t> row_offsets{0};  ///< n + 1 offsets, non-decreasing, first 0, last m
  std::vector<vertex_t> col_indices;     ///< m heads, each in [0, n)
  std::vector<weight_t> weights;         ///< m lengths, `weights[e]` belongs to `col_indices[e]`

  /// @return the number of vertices n.
  std::size_t num_vertices() const noexcept { return row_offsets.empty() ? 0 : row_offsets.size() - 1; }
  /// @return the number of (directed) edges m.
  std::size_t num_edges() const noexcept { return col_indices.size(); }
  /// @return the out-degree of `u` (precondition: u in [0, n)).
  std::size_t degree(vertex_t u) const noexcept {
    return row_offsets[static_cast<std::size_t>(u) + 1] - row_offsets[static_cast<std::size_t>(u)];
  }

  /// @return true when some edge has a negative weight. Work O(m).
  bool has_negative_weights() const noexcept {
    return std::any_of(weights.begin(), weights.end(), [](weight_t w) { return w < 0; });
  }

  /// @return the largest out-degree (0 for a graph without edges). Work O(n).
  std::size_t max_degree() const noexcept {
    std::size_t best = 0;
    for (std::size_t u = 0; u + 1 < row_offsets.size(); ++u)
      best = std::max<std::size_t>(best, row_offsets[u + 1] - row_offsets[u]);
    return best;
  }

  /// @brief Checks the invariants above.
  /// @throws std::invalid_argument naming the first broken invariant (offsets
  ///         not starting at 0, decreasing, not ending at m; arrays of unequal
  ///         length; a head out of range; too many vertices or edges).
  /// Work O(n + m).
  void validate() const {
    auto fail = [](const std::string& what) { throw std::invalid_argument("Csr::validate: " + what); };
    if (row_offsets.empty()) fail("row_offsets is empty (an empty graph has row_offsets = {0})");
    if (row_offsets.front() != 0) fail("row_offsets[0] = " + std::to_string(row_offsets.front()) + ", not 0");
    const std::size_t n = num_vertices(), m = num_edges();
    if (n > kMaxVertices) fail(std::to_string(n) + " vertices exceed the maximum " + std::to_string(kMaxVertices));
    if (m > kMaxEdges) fail(std::to_string(m) + " edges exceed the maximum " + std::to_string(kMaxEdges));
    if (weights.size() != m)
      fail("weights has " + std::to_string(weights.size()) + " entries but col_indices " + std::to_string(m));
    for (std::size_t u = 0; u < n; ++u)
      if (row_offsets[u + 1] < row_offsets[u])
        fail("row_offsets decreases at vertex " + std::to_string(u));
    if (row_offsets.back() != m)
      fail("row_offsets[n] = " + std::to_string(row_offsets.back()) + " but there are " + std::to_string(m) + " edges");
    for (std::size_t e = 0; e < m; ++e)
      if (col_indices[e] < 0 || static_cast<std::size_t>(col_indices[e]) >= n)
        fail("edge " + std::to_string(e) + " has head " + std::to_string(col_indices[e]) + ", outside [0, " +
             std::to_string(n) + ")");
  }
};

/// @brief Builds the CSR of `num_vertices` vertices and the given edges.
///
/// Edges are grouped by tail with a stable counting sort, so the out-edges
/// of each vertex keep their order in `edges`; self loops and parallel edges
/// are kept.
/// @param num_vertices n, at most kMaxVertices
/// @param edges        m edges with both ends in [0, n), m at most kMaxEdges
/// @throws std::invalid_argument when an end is out of range or a size is too large.
/// Work O(n + m), memory O(n + m).
inline Csr csr_from_edges(std::size_t num_vertices, const std::vector<Edge>& edges) {
  if (num_vertices > kMaxVertices)
    throw std::invalid_argument("csr_from_edges: " + std::to_string(num_vertices) + " vertices exceed the maximum");
  if (edges.size() > kMaxEdges)
    throw std::invalid_argument("csr_from_edges: " + std::to_string(edges.size()) + " edges exceed the maximum");
  Csr g;
  g.row_offsets.assign(num_vertices + 1, 0);
  for (std::size_t e = 0; e < edges.size(); ++e) {
    const Edge& ed = edges[e];
    if (ed.src < 0 || static_cast<std::size_t>(ed.src) >= num_vertices || ed.dst < 0 ||
        static_cast<std::size_t>(ed.dst) >= num_vertices)
      throw std::invalid_argument("csr_from_edges: edge " + std::to_string(e) + " (" + std::to_string(ed.src) +
                                  " -> " + std::to_string(ed.dst) + ") has an end outside [0, " +
                                  std::to_string(num_vertices) + ")");
    ++g.row_offsets[static_cast<std::size_t>(ed.src) + 1];
  }
  for (std::size_t u = 0; u < num_vertices; ++u) g.row_offsets[u + 1] += g.row_offsets[u];
  g.col_indices.resize(edges.size());
  g.weights.resize(edges.size());
  std::vector<offset_t> next(g.row_offsets.begin(), g.row_offsets.end() - 1);
  for (const Edge& ed : edges) {
    const offset_t at = next[static_cast<std::size_t>(ed.src)]++;
    g.col_indices[at] = ed.dst;
    g.weights[at] = ed.weight;
  }
  return g;
}

/// @brief The edges of `g`, tail by tail, in CSR order.
/// Work O(n + m).
inline std::vector<Edge> edges_of(const Csr& g) {
  std::vector<Edge> out;
  out.reserve(g.num_edges());
  for (std::size_t u = 0; u < g.num_vertices(); ++u)
    for (offset_t e = g.row_offsets[u]; e < g.row_offsets[u + 1]; ++e)
      out.push_back(Edge{static_cast<vertex_t>(u), g.col_indices[e], g.weights[e]});
  return out;
}

/// @brief The transpose (reverse graph) of `g`: an edge `v -> u` of the same
///        weight for every edge `u -> v`. Row v of the result lists the
///        in-edges of v, by increasing tail u, which is what a pull-style
///        (min, +) SpMV reads.
/// @pre `g` is valid (see Csr::validate).
/// Work O(n + m).
inline Csr transpose(const Csr& g) {
  const std::size_t n = g.num_vertices(), m = g.num_edges();
  Csr t;
  t.row_offsets.assign(n + 1, 0);
  for (std::size_t e = 0; e < m; ++e) ++t.row_offsets[static_cast<std::size_t>(g.col_indices[e]) + 1];
  for (std::size_t v = 0; v < n; ++v) t.row_offsets[v + 1] += t.row_offsets[v];
  t.col_indices.resize(m);
  t.weights.resize(m);
  std::vector<offset_t> next(t.row_offsets.begin(), t.row_offsets.end() - 1);
  for (std::size_t u = 0; u < n; ++u)
    for (offset_t e = g.row_offsets[u]; e < g.row_offsets[u + 1]; ++e) {
      const offset_t at = next[static_cast<std::size_t>(g.col_indices[e])]++;
      t.col_indices[at] = static_cast<vertex_t>(u);
      t.weights[at] = g.weights[e];
    }
  return t;
}

/// @brief A graph in ELLPACK form: every row padded to the same width,
///        stored column-major.
///
/// Entry k (0-based) of row r is at index `k * num_rows + r` of
/// `col_indices` and `weights`, so that consecutive threads, one per row,
/// read consecutive words. Rows shorter than `width` are padded with
/// col_indices = kPadding (and weight 0), which readers must skip.
/// Memory: \f$8 \cdot n \cdot \mathrm{width}\f$ bytes.
struct Ell {
  /// @brief The column index of a padding entry.
  static constexpr vertex_t kPadding = -1;
  std::size_t num_rows = 0;          ///< n
  std::size_t width = 0;             ///< the largest row length (max degree)
  std::vector<vertex_t> col_indices; ///< num_rows * width entries, column-major, kPadding in padding
  std::vector<weight_t> weights;     ///< num_rows * width entries, column-major, 0 in padding
};

/// @brief Converts `g` to ELL (column-major, padded to the largest degree).
/// @param g           a valid CSR graph (rows become ELL rows: pass the
///                    transpose for a pull-style SpMV over in-edges)
/// @param max_entries the largest padded size `n * width` accepted
///                    (default \f$2^{28}\f$ entries, 2 GiB of arrays)
/// @throws std::invalid_argument when `n * width` exceeds `max_entries`
///         or the width exceeds kMaxEllWidth (power-law graphs, whose largest degree is far above the mean,
///         are the usual cause: the message gives the padding ratio).
/// Work O(n * width).
inline Ell to_ell(const Csr& g, std::size_t max_entries = std::size_t{1} << 28) {
  Ell out;
  out.num_rows = g.num_vertices();
  out.width = g.max_degree();
  const std::size_t entries = out.num_rows * out.width;
  if (out.width != 0 && entries / out.width != out.num_rows) throw std::invalid_argument("to_ell: size overflows");
  if (out.width > kMaxEllWidth)
    throw std::invalid_argument("to_ell: a row of " + std::to_string(out.width) + " entries exceeds kMaxEllWidth = " +
                                std::to_string(kMaxEllWidth));
  if (entries > max_entries)
    throw std::invalid_argument("to_ell: padding " + std::to_string(out.num_rows) + " rows to width " +
                                std::to_string(out.width) + " needs " + std::to_string(entries) +
                                " entries (" + std::to_string(g.num_edges() ? entries / g.num_edges() : 0) +
                                "x the edge count), more than the limit " + std::to_string(max_entries));
  out.col_indices.assign(entries, Ell::kPadding);
  out.weights.assign(entries, 0);
  for (std::size_t r = 0; r < out.num_rows; ++r) {
    std::size_t k = 0;
    for (offset_t e = g.row_offsets[r]; e < g.row_offsets[r + 1]; ++e, ++k) {
      out.col_indices[k * out.num_rows + r] = g.col_indices[e];
      out.weights[k * out.num_rows + r] = g.weights[e];
    }
  }
  return out;
}

}  // namespace cudalab::graph
