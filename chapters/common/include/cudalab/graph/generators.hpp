/// @file generators.hpp
/// @brief Seeded graph generators (host): a 2-D grid with random weights (a
///        road-like mesh), a random geometric graph, R-MAT, and the seeded
///        weighting of an unweighted graph (pair_hash_weights).
///
/// Every random choice is a SplitMix64 output (cudalab/generators.hpp,
/// cudalab::gen::bits) keyed by (seed, an index that depends only on the
/// generator's parameters), so a graph is reproduced from its parameters and
/// seed alone, on any machine. Weights are integers in [min_weight, max_weight].
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cudalab/generators.hpp"
#include "cudalab/graph/csr.hpp"

namespace cudalab::graph {

namespace detail {
/// An integer in [lo, hi] from 64 random bits (multiply-shift).
inline weight_t weight_from_bits(std::uint64_t r, weight_t lo, weight_t hi) {
  const auto span = static_cast<std::uint64_t>(static_cast<std::int64_t>(hi) - lo) + 1;
  return static_cast<weight_t>(lo + static_cast<std::int64_t>((static_cast<unsigned __int128>(r) * span) >> 64));
}
/// A double in [0, 1) from 64 random bits.
inline double unit_from_bits(std::uint64_t r) { return static_cast<double>(r >> 11) * 0x1.0p-53; }
inline void check_weights(const char* fn, weight_t lo, weight_t hi) {
  if (lo > hi) throw std::invalid_argument(std::string(fn) + ": min_weight > max_weight");
}
}  // namespace detail

/// @brief A rows × cols grid: vertex `r * cols + c`, joined to its four
///        neighbours (up, left, right, down, in that order in each row of the
///        CSR) by two arcs of the same random weight.
///
/// Each undirected grid edge is kept with probability `keep_probability`
/// (1: the full mesh; about 0.69 gives the 2.8 arcs per vertex of the DIMACS
/// road graphs, with some vertices cut off, as in real road data).
/// @param rows, cols         grid shape; rows * cols at most kMaxVertices
/// @param seed               the random stream
/// @param min_weight, max_weight weights are uniform in this closed range
/// @param keep_probability   in [0, 1]
/// @throws std::invalid_argument on an empty weight range, a probability
///         outside [0, 1], or a grid too large for vertex_t / offset_t.
/// Work O(rows · cols). About 4n arcs for the full mesh.
inline Csr grid_2d(std::size_t rows, std::size_t cols, std::uint64_t seed, weight_t min_weight = 1,
                   weight_t max_weight = 1000, double keep_probability = 1.0) {
  detail::check_weights("grid_2d", min_weight, max_weight);
  if (!(keep_probability >= 0.0 && keep_probability <= 1.0))
    throw std::invalid_argument("grid_2d: keep_probability outside [0, 1]");
  const std::size_t n = rows * cols;
  if ((rows != 0 && n / rows != cols) || n > kMaxVertices || 4 * n > kMaxEdges)
    throw std::invalid_argument("grid_2d: " + std::to_string(rows) + " x " + std::to_string(cols) + " is too large");
  const std::size_t horizontal = rows * (cols == 0 ? 0 : cols - 1);
  // Undirected edge ids: horizontal (r, c)-(r, c+1) is r*(cols-1)+c; vertical
  // (r, c)-(r+1, c) is horizontal + r*cols + c.
  const std::uint64_t weight_seed = seed, keep_seed = gen::splitmix64(seed ^ 0x6B656570ull);
  auto kept = [&](std::size_t id) {
    return keep_probability >= 1.0 || detail::unit_from_bits(gen::bits(keep_seed, id)) < keep_probability;
  };
  Csr g;
  g.row_offsets.assign(n + 1, 0);
  // visit(u, f): calls f(v, undirected id) for each kept neighbour in CSR order.
  auto visit = [&](std::size_t u, auto&& f) {
    const std::size_t r = u / cols, c = u % cols;
    if (r > 0 && kept(horizontal + (r - 1) * cols + c)) f(u - cols, horizontal + (r - 1) * cols + c);
    if (c > 0 && kept(r * (cols - 1) + c - 1)) f(u - 1, r * (cols - 1) + c - 1);
    if (c + 1 < cols && kept(r * (cols - 1) + c)) f(u + 1, r * (cols - 1) + c);
    if (r + 1 < rows && kept(horizontal + r * cols + c)) f(u + cols, horizontal + r * cols + c);
  };
  for (std::size_t u = 0; u < n; ++u) {
    offset_t deg = 0;
    visit(u, [&](std::size_t, std::size_t) { ++deg; });
    g.row_offsets[u + 1] = g.row_offsets[u] + deg;
  }
  g.col_indices.resize(g.row_offsets[n]);
  g.weights.resize(g.row_offsets[n]);
  for (std::size_t u = 0; u < n; ++u) {
    offset_t at = g.row_offsets[u];
    visit(u, [&](std::size_t v, std::size_t id) {
      g.col_indices[at] = static_cast<vertex_t>(v);
      g.weights[at] = detail::weight_from_bits(gen::bits(weight_seed, id), min_weight, max_weight);
      ++at;
    });
  }
  return g;
}

/// @brief A random geometric graph: n points uniform in the unit square,
///        two arcs (both directions) between every pair closer than
///        \f$r = \sqrt{d / (\pi n)}\f$, so the expected degree is about d
///        (less near the border).
///
/// The weight of an edge grows with its length: \f$\mathrm{min} +
/// \lfloor (\mathrm{max} - \mathrm{min}) \cdot \mathrm{len} / r \rfloor\f$,
/// like road lengths; neighbours are listed by increasing vertex id.
/// Source: Penrose, "Random Geometric Graphs", Oxford University Press, 2003.
/// @param n            vertex count, at most kMaxVertices
/// @param avg_degree   d > 0, the expected degree
/// @param seed         the random stream (point i is `bits(seed, 2i)`, `bits(seed, 2i+1)`)
/// @param min_weight, max_weight the weight range
/// @throws std::invalid_argument on bad parameters or more edges than offset_t holds.
/// Work O(n + m) expected (a bucket grid of cell size r).
inline Csr random_geometric(std::size_t n, double avg_degree, std::uint64_t seed, weight_t min_weight = 1,
                            weight_t max_weight = 1000) {
  detail::check_weights("random_geometric", min_weight, max_weight);
  if (!(avg_degree > 0.0)) throw std::invalid_argument("random_geometric: avg_degree must be positive");
  if (n > kMaxVertices) throw std::invalid_argument("random_geometric: too many vertices");
  Csr g;
  g.row_offsets.assign(n + 1, 0);
  if (n == 0) return g;
  const double radius = std::sqrt(avg_degree / (3.14159265358979323846 * static_cast<double>(n)));
  const std::size_t cells = std::max<std::size_t>(1, static_cast<std::size_t>(1.0 / radius));
  std::vector<double> x(n), y(n);
  std::vector<std::size_t> cell_start(cells * cells + 1, 0), order(n);
  auto cell_of = [&](double v) { return std::min(cells - 1, static_cast<std::size_t>(v * static_cast<double>(cells))); };
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = detail::unit_from_bits(gen::bits(seed, 2 * i));
    y[i] = detail::unit_from_bits(gen::bits(seed, 2 * i + 1));
    ++cell_start[cell_of(y[i]) * cells + cell_of(x[i]) + 1];
  }
  for (std::size_t c = 0; c < cells * cells; ++c) cell_start[c + 1] += cell_start[c];
  {
    std::vector<std::size_t> next(cell_start.begin(), cell_start.end() - 1);
    for (std::size_t i = 0; i < n; ++i) order[next[cell_of(y[i]) * cells + cell_of(x[i])]++] = i;
  }
  // Neighbours of u, by increasing id (cells hold ids in increasing order;
  // the 3 x 3 block is merged by a small sort per vertex).
  std::vector<std::pair<vertex_t, weight_t>> nb;
  auto neighbours = [&](std::size_t u) {
    nb.clear();
    const std::size_t cx = cell_of(x[u]), cy = cell_of(y[u]);
    for (std::size_t gy = cy == 0 ? 0 : cy - 1; gy <= std::min(cells - 1, cy + 1); ++gy)
      for (std::size_t gx = cx == 0 ? 0 : cx - 1; gx <= std::min(cells - 1, cx + 1); ++gx)
        for (std::size_t k = cell_start[gy * cells + gx]; k < cell_start[gy * cells + gx + 1]; ++k) {
          const std::size_t v = order[k];
          if (v == u) continue;
          const double dx = x[u] - x[v], dy = y[u] - y[v];
          const double len = std::sqrt(dx * dx + dy * dy);
          if (len >= radius) continue;
          const double span = static_cast<double>(static_cast<std::int64_t>(max_weight) - min_weight);
          const auto w = static_cast<weight_t>(min_weight + static_cast<std::int64_t>(std::floor(span * len / radius)));
          nb.emplace_back(static_cast<vertex_t>(v), w);
        }
    std::sort(nb.begin(), nb.end());
  };
  std::vector<Edge> edges;
  for (std::size_t u = 0; u < n; ++u) {
    neighbours(u);
    if (edges.size() + nb.size() > kMaxEdges) throw std::invalid_argument("random_geometric: too many edges");
    for (const auto& [v, w] : nb) edges.push_back(Edge{static_cast<vertex_t>(u), v, w});
  }
  return csr_from_edges(n, edges);
}

/// @brief An R-MAT graph: \f$2^{\mathrm{scale}}\f$ vertices and
///        `edge_factor` × \f$2^{\mathrm{scale}}\f$ directed edges, each
///        placed by descending `scale` levels of the adjacency matrix,
///        choosing the quadrant (top-left, top-right, bottom-left,
///        bottom-right) with probabilities (a, b, c, 1 - a - b - c).
///
/// The defaults are Graph 500's (0.57, 0.19, 0.19): a power-law degree
/// distribution with a few very high-degree vertices (vertex ids are not
/// permuted, so low ids are the hubs). Self loops and parallel edges are
/// kept. Weights uniform in [min_weight, max_weight].
/// Source: Chakrabarti, Zhan and Faloutsos, "R-MAT: A recursive model for
/// graph mining", SIAM SDM 2004; Graph 500 benchmark specification.
/// @param scale       log2 of the vertex count, at most 30
/// @param edge_factor edges per vertex (the average out-degree)
/// @param seed        the random stream (edge i draws 16 bits per level from the
///                    SplitMix64 stream seeded with `bits(seed, i)`)
/// @param min_weight, max_weight the weight range
/// @param a, b, c     quadrant probabilities, non-negative, a + b + c ≤ 1
/// @throws std::invalid_argument on bad parameters or more edges than offset_t holds.
/// Work O(m · scale).
inline Csr rmat(unsigned scale, std::size_t edge_factor, std::uint64_t seed, weight_t min_weight = 1,
                weight_t max_weight = 1000, double a = 0.57, double b = 0.19, double c = 0.19) {
  detail::check_weights("rmat", min_weight, max_weight);
  if (scale > 30) throw std::invalid_argument("rmat: scale above 30");
  if (a < 0 || b < 0 || c < 0 || a + b + c > 1.0) throw std::invalid_argument("rmat: bad quadrant probabilities");
  const std::size_t n = std::size_t{1} << scale;
  const std::size_t m = edge_factor * n;
  if (edge_factor != 0 && m / edge_factor != n) throw std::invalid_argument("rmat: too many edges");
  if (m > kMaxEdges) throw std::invalid_argument("rmat: " + std::to_string(m) + " edges exceed the maximum");
  const std::uint64_t weight_seed = gen::splitmix64(seed ^ 0x77656967ull);
  // Quadrant thresholds in units of 2^-16: each level draws 16 random bits
  // (four levels per 64-bit SplitMix64 output).
  const auto ta = static_cast<std::uint32_t>(a * 65536.0), tb = static_cast<std::uint32_t>((a + b) * 65536.0),
             tc = static_cast<std::uint32_t>((a + b + c) * 65536.0);
  std::vector<Edge> edges(m);
  for (std::size_t i = 0; i < m; ++i) {
    std::size_t row = 0, col = 0;
    std::uint64_t state = gen::bits(seed, i), word = 0;
    for (unsigned level = 0; level < scale; ++level) {
      if (level % 4 == 0) word = gen::splitmix64(state += 0x9E3779B97F4A7C15ull);
      const auto r = static_cast<std::uint32_t>(word & 0xFFFFu);
      word >>= 16;
      const std::size_t bit = std::size_t{1} << (scale - 1 - level);
      // Branch-free quadrant: bottom half when r >= a + b; right half in
      // [a, a + b) and [a + b + c, 1).
      const std::size_t down = r >= tb, right = static_cast<std::size_t>((r >= ta) ^ (r >= tb) ^ (r >= tc));
      row |= down * bit;
      col |= right * bit;
    }
    edges[i] = Edge{static_cast<vertex_t>(row), static_cast<vertex_t>(col),
                    detail::weight_from_bits(gen::bits(weight_seed, i), min_weight, max_weight)};
  }
  return csr_from_edges(n, edges);
}

/// @brief The weight pair_hash_weights() gives the edge between `u` and `v`
///        (either direction): an integer in [min_weight, max_weight] from the
///        SplitMix64 output `cudalab::gen::bits(seed, key)` with key =
///        min(u, v) · 2^32 + max(u, v), mapped by multiply-shift.
/// @pre u, v ≥ 0 and min_weight ≤ max_weight.
inline weight_t pair_hash_weight(vertex_t u, vertex_t v, std::uint64_t seed, weight_t min_weight,
                                 weight_t max_weight) {
  const auto lo = static_cast<std::uint64_t>(std::min(u, v)), hi = static_cast<std::uint64_t>(std::max(u, v));
  return detail::weight_from_bits(gen::bits(seed, (lo << 32) | hi), min_weight, max_weight);
}

/// @brief Gives every edge of `g` a deterministic weight, for real graphs
///        that have none (a Matrix Market `pattern` file such as the
///        luxembourg_osm road network, loaded with every weight 1).
///
/// The rule: edge `u -> v` gets pair_hash_weight(u, v, seed, min_weight,
/// max_weight), a hash of the unordered pair {u, v}. So both directions of
/// a road get the same length (the graph stays undirected), parallel copies
/// of an edge get the same length, and the weights depend only on the
/// vertex ids and the seed, never on the edge order or the machine.
/// @param g          any valid graph; its structure is kept, its weights replaced
/// @param seed       the random stream
/// @param min_weight, max_weight the closed range of the weights
/// @throws std::invalid_argument when min_weight > max_weight (`g` unchanged:
///         it is taken by value).
/// Work O(n + m).
inline Csr pair_hash_weights(Csr g, std::uint64_t seed, weight_t min_weight, weight_t max_weight) {
  detail::check_weights("pair_hash_weights", min_weight, max_weight);
  for (std::size_t u = 0; u < g.num_vertices(); ++u)
    for (offset_t e = g.row_offsets[u]; e < g.row_offsets[u + 1]; ++e)
      g.weights[e] = pair_hash_weight(static_cast<vertex_t>(u), g.col_indices[e], seed, min_weight, max_weight);
  return g;
}

}  // namespace cudalab::graph
