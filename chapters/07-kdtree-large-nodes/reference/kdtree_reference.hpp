/// @file kdtree_reference.hpp
/// @brief CPU references of chapter 7: the building blocks of exercises 7.1
///        to 7.4 and a deterministic serial builder of the large-node stage
///        that applies the same rule, with a checker of the tree invariants.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cudalab/kdtree.cuh"

namespace cudalab::reference {

/// @brief Coordinate `axis` (0, 1, 2) of a point.
inline float coord(const float3& p, int axis) { return axis == 0 ? p.x : (axis == 1 ? p.y : p.z); }
/// @brief Sets coordinate `axis` (0, 1, 2) of a point.
inline void set_coord(float3& p, int axis, float v) { (axis == 0 ? p.x : (axis == 1 ? p.y : p.z)) = v; }
/// @brief True when all three coordinates are finite.
inline bool finite_point(const float3& p) { return std::isfinite(p.x) && std::isfinite(p.y) && std::isfinite(p.z); }

/// @brief The empty box: lo = +inf, hi = −inf.
inline kdtree::Box empty_box() {
  const float inf = std::numeric_limits<float>::infinity();
  return {{inf, inf, inf}, {-inf, -inf, -inf}};
}

/// @brief Reference of 7.1: the bounding box of the finite points and the
///        first index of a point with a NaN or infinite coordinate (n when none).
/// Work O(n), one pass.
inline std::pair<kdtree::Box, std::uint64_t> bounding_box(const std::vector<float3>& points) {
  kdtree::Box b = empty_box();
  std::uint64_t first_bad = points.size();
  for (std::size_t i = 0; i < points.size(); ++i) {
    const float3 p = points[i];
    if (!finite_point(p)) {
      first_bad = std::min<std::uint64_t>(first_bad, i);
      continue;
    }
    b.lo = {std::min(b.lo.x, p.x), std::min(b.lo.y, p.y), std::min(b.lo.z, p.z)};
    b.hi = {std::max(b.hi.x, p.x), std::max(b.hi.y, p.y), std::max(b.hi.z, p.z)};
  }
  return {b, first_bad};
}

/// @brief Reference of 7.2: (axis, split) of a cell: the longest side (ties
///        to the lower axis), split = 0.5·lo + 0.5·hi with each product rounded.
inline std::pair<int, float> select_split(const kdtree::Box& box) {
  int axis = 0;
  float best = box.hi.x - box.lo.x;
  for (int a = 1; a < 3; ++a) {
    const float e = coord(box.hi, a) - coord(box.lo, a);
    if (e > best) {
      best = e;
      axis = a;
    }
  }
  const volatile float lo_half = 0.5f * coord(box.lo, axis);  // volatile: no contraction to an FMA
  const volatile float hi_half = 0.5f * coord(box.hi, axis);
  return {axis, lo_half + hi_half};
}

/// @brief Reference of 7.3: the right flags of positions [0, n) of a level
///        and the right count of every active node (see kdtree.cuh).
inline std::pair<std::vector<std::uint8_t>, std::vector<std::uint32_t>> classify_and_count(
    const std::vector<float3>& points, const std::vector<std::uint32_t>& idx, const std::vector<kdtree::Node>& nodes,
    const std::vector<int>& active) {
  std::vector<std::uint8_t> flags(idx.size(), 0);
  std::vector<std::uint32_t> counts(active.size(), 0);
  for (std::size_t k = 0; k < active.size(); ++k) {
    const kdtree::Node& node = nodes[static_cast<std::size_t>(active[k])];
    for (std::size_t i = node.begin; i < static_cast<std::size_t>(node.begin) + node.count; ++i) {
      const bool right = coord(points[idx[i]], node.axis) >= node.split;
      flags[i] = right ? 1 : 0;
      counts[k] += right ? 1u : 0u;
    }
  }
  return {flags, counts};
}

/// @brief Reference of 7.4: every segment stably partitioned, left entries first.
inline std::vector<std::uint32_t> segmented_split(const std::vector<std::uint32_t>& in,
                                                  const std::vector<std::uint8_t>& flags,
                                                  const std::vector<kdtree::Node>& nodes,
                                                  const std::vector<int>& active) {
  std::vector<std::uint32_t> out(in.size());
  for (const int a : active) {
    const kdtree::Node& node = nodes[static_cast<std::size_t>(a)];
    std::size_t o = node.begin;
    for (int side = 0; side < 2; ++side)
      for (std::size_t i = node.begin; i < static_cast<std::size_t>(node.begin) + node.count; ++i)
        if (flags[i] == side) out[o++] = in[i];
  }
  return out;
}

/// @brief What the serial builder records of one level.
struct Level {
  std::size_t active = 0;  ///< large nodes split at this level
  std::size_t points = 0;  ///< points in those nodes (the working array's length)
};

/// @brief The output of the large-node stage.
struct Tree {
  std::vector<kdtree::Node> nodes;       ///< node 0 is the root
  std::vector<int> small;                ///< indices of the small nodes (not split), in creation order
  std::vector<std::uint32_t> leaf_points;  ///< point indices grouped by small node: node.begin, node.count index it
  std::vector<Level> levels;             ///< one entry per level of large nodes
  int depth = 0;                         ///< largest node depth
};

/// @brief The deterministic serial large-node stage: level by level, every
///        large node (more than `threshold` points, depth below `max_depth`)
///        is split by select_split and classified by `coordinate ≥ split`;
///        its children (left first) are appended to the node array in the
///        order of the active list, and go to the next level when they are
///        large, to the small list otherwise.
/// @throws std::invalid_argument when there are no points, threshold = 0, or
///         a coordinate is NaN or infinite (the message names the index).
/// Work O(n · depth).
inline Tree build(const std::vector<float3>& points, std::size_t threshold, int max_depth) {
  if (points.empty()) throw std::invalid_argument("reference::build: no points");
  if (threshold == 0) throw std::invalid_argument("reference::build: threshold T = 0");
  const auto [root_box, bad] = bounding_box(points);
  if (bad < points.size())
    throw std::invalid_argument("reference::build: point " + std::to_string(bad) + " has a NaN or infinite coordinate");
  Tree t;
  std::vector<std::uint32_t> work(points.size());
  for (std::size_t i = 0; i < work.size(); ++i) work[i] = static_cast<std::uint32_t>(i);
  t.nodes.push_back({root_box, -1, 0.0f, -1, -1, 0u, static_cast<unsigned>(points.size()), 0});
  std::vector<int> active;
  auto place = [&](int id, const std::vector<std::uint32_t>& from, std::size_t first, std::vector<int>& next,
                   std::vector<std::uint32_t>& next_work) {
    kdtree::Node& node = t.nodes[static_cast<std::size_t>(id)];
    t.depth = std::max(t.depth, node.depth);
    const auto* src = from.data() + first;
    if (node.count > threshold && node.depth < max_depth) {
      node.begin = static_cast<unsigned>(next_work.size());
      next_work.insert(next_work.end(), src, src + node.count);
      next.push_back(id);
    } else {
      node.begin = static_cast<unsigned>(t.leaf_points.size());
      t.leaf_points.insert(t.leaf_points.end(), src, src + node.count);
      t.small.push_back(id);
    }
  };
  {
    std::vector<std::uint32_t> first_work;
    place(0, work, 0, active, first_work);
    work = std::move(first_work);
  }
  while (!active.empty()) {
    t.levels.push_back({active.size(), work.size()});
    for (const int a : active) {
      const auto [axis, split] = select_split(t.nodes[static_cast<std::size_t>(a)].box);
      t.nodes[static_cast<std::size_t>(a)].axis = axis;
      t.nodes[static_cast<std::size_t>(a)].split = split;
    }
    const auto [flags, rights] = classify_and_count(points, work, t.nodes, active);
    const std::vector<std::uint32_t> parted = segmented_split(work, flags, t.nodes, active);
    std::vector<int> next;
    std::vector<std::uint32_t> next_work;
    for (std::size_t k = 0; k < active.size(); ++k) {
      const int a = active[k];
      const kdtree::Node parent = t.nodes[static_cast<std::size_t>(a)];
      const unsigned right_count = rights[k];
      const unsigned left_count = parent.count - right_count;
      kdtree::Node left{parent.box, -1, 0.0f, -1, -1, 0u, left_count, parent.depth + 1};
      kdtree::Node right{parent.box, -1, 0.0f, -1, -1, 0u, right_count, parent.depth + 1};
      set_coord(left.box.hi, parent.axis, parent.split);
      set_coord(right.box.lo, parent.axis, parent.split);
      const int li = static_cast<int>(t.nodes.size());
      t.nodes.push_back(left);
      t.nodes.push_back(right);
      t.nodes[static_cast<std::size_t>(a)].left = li;
      t.nodes[static_cast<std::size_t>(a)].right = li + 1;
      place(li, parted, parent.begin, next, next_work);
      place(li + 1, parted, static_cast<std::size_t>(parent.begin) + left_count, next, next_work);
    }
    active = std::move(next);
    work = std::move(next_work);
  }
  return t;
}

/// @brief Checks the invariants of a large-node stage's output: every point
///        in exactly one small node; every point inside its small node's cell
///        and on its side of every ancestor's split plane; children's cells
///        are the parent's cut at the split; a split node's count is the sum
///        of its children's; small nodes hold at most `threshold` points
///        unless at `max_depth`, split nodes more.
/// @return an empty string when all hold, else the first violation found.
/// Work O(n · depth + nodes).
inline std::string check_tree(const std::vector<float3>& points, const std::vector<kdtree::Node>& nodes,
                              const std::vector<int>& small, const std::vector<std::uint32_t>& leaf_points,
                              std::size_t threshold, int max_depth) {
  const std::size_t n = points.size();
  if (nodes.empty()) return "the node array is empty";
  std::vector<int> parent(nodes.size(), -1);
  std::vector<char> is_small(nodes.size(), 0);
  auto name = [](std::size_t i) { return "node " + std::to_string(i); };
  for (const int s : small) {
    if (s < 0 || static_cast<std::size_t>(s) >= nodes.size()) return "small list entry " + std::to_string(s) + " is no node";
    if (is_small[static_cast<std::size_t>(s)]) return name(static_cast<std::size_t>(s)) + " is twice in the small list";
    is_small[static_cast<std::size_t>(s)] = 1;
  }
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const kdtree::Node& v = nodes[i];
    if (v.axis < 0) {
      if (!is_small[i]) return name(i) + " is not split (axis -1) but not in the small list";
      if (v.left != -1 || v.right != -1) return name(i) + " is not split but has children";
      if (v.count > threshold && v.depth < max_depth)
        return name(i) + " is small with " + std::to_string(v.count) + " points > T = " + std::to_string(threshold) +
               " at depth " + std::to_string(v.depth);
      continue;
    }
    if (is_small[i]) return name(i) + " is in the small list but split";
    if (v.axis > 2) return name(i) + " has axis " + std::to_string(v.axis);
    if (v.count <= threshold) return name(i) + " is split with only " + std::to_string(v.count) + " points <= T";
    if (v.depth >= max_depth) return name(i) + " is split at depth " + std::to_string(v.depth) + " >= max_depth";
    for (const int c : {v.left, v.right}) {
      if (c <= 0 || static_cast<std::size_t>(c) >= nodes.size()) return name(i) + " has child " + std::to_string(c);
      if (parent[static_cast<std::size_t>(c)] != -1) return name(static_cast<std::size_t>(c)) + " has two parents";
      parent[static_cast<std::size_t>(c)] = static_cast<int>(i);
      if (nodes[static_cast<std::size_t>(c)].depth != v.depth + 1)
        return name(static_cast<std::size_t>(c)) + " has depth " + std::to_string(nodes[static_cast<std::size_t>(c)].depth) +
               ", its parent " + std::to_string(v.depth);
    }
    const kdtree::Node& l = nodes[static_cast<std::size_t>(v.left)];
    const kdtree::Node& r = nodes[static_cast<std::size_t>(v.right)];
    if (static_cast<std::size_t>(l.count) + r.count != v.count)
      return name(i) + " holds " + std::to_string(v.count) + " points, its children " + std::to_string(l.count) +
             " + " + std::to_string(r.count);
    kdtree::Box lb = v.box, rb = v.box;
    set_coord(lb.hi, v.axis, v.split);
    set_coord(rb.lo, v.axis, v.split);
    auto same = [](const kdtree::Box& a, const kdtree::Box& b) {
      return a.lo.x == b.lo.x && a.lo.y == b.lo.y && a.lo.z == b.lo.z && a.hi.x == b.hi.x && a.hi.y == b.hi.y &&
             a.hi.z == b.hi.z;
    };
    if (!same(l.box, lb) || !same(r.box, rb)) return name(i) + ": a child's cell is not the parent's cut at the split";
  }
  for (std::size_t i = 1; i < nodes.size(); ++i)
    if (parent[i] == -1) return name(i) + " is no child of any node (only node 0, the root, may be)";
  if (leaf_points.size() != n)
    return "the small nodes' point list holds " + std::to_string(leaf_points.size()) + " entries for " +
           std::to_string(n) + " points";
  std::vector<int> owner(n, -1);
  for (const int s : small) {
    const kdtree::Node& v = nodes[static_cast<std::size_t>(s)];
    if (static_cast<std::size_t>(v.begin) + v.count > n) return name(static_cast<std::size_t>(s)) + ": point range past the end";
    for (std::size_t j = v.begin; j < static_cast<std::size_t>(v.begin) + v.count; ++j) {
      const std::uint32_t p = leaf_points[j];
      if (p >= n) return "leaf_points[" + std::to_string(j) + "] = " + std::to_string(p) + " is no point index";
      if (owner[p] != -1)
        return "point " + std::to_string(p) + " is in two small nodes (" + std::to_string(owner[p]) + " and " +
               std::to_string(s) + ")";
      owner[p] = s;
      const float3 q = points[p];
      if (q.x < v.box.lo.x || q.y < v.box.lo.y || q.z < v.box.lo.z || q.x > v.box.hi.x || q.y > v.box.hi.y ||
          q.z > v.box.hi.z)
        return "point " + std::to_string(p) + " lies outside the cell of its small " + name(static_cast<std::size_t>(s));
      for (int c = s, a = parent[static_cast<std::size_t>(s)]; a != -1; c = a, a = parent[static_cast<std::size_t>(a)]) {
        const kdtree::Node& u = nodes[static_cast<std::size_t>(a)];
        const bool right = coord(q, u.axis) >= u.split;
        if (right != (u.right == c))
          return "point " + std::to_string(p) + " is below the " + (right ? "left" : "right") + " child of " +
                 name(static_cast<std::size_t>(a)) + " but its coordinate " + std::to_string(coord(q, u.axis)) +
                 (right ? " >= " : " < ") + "split " + std::to_string(u.split);
      }
    }
  }
  for (std::size_t p = 0; p < n; ++p)
    if (owner[p] == -1) return "point " + std::to_string(p) + " is in no small node";
  return {};
}

/// @brief Checks one output list of node completion (exercise 7.5): the
///        point ranges [begin, begin + count) of the nodes `ids` (the
///        non-empty ones) tile [0, total) exactly, `total` being the list's
///        point counter.
/// @param nodes the node array; `ids` index it
/// @param ids   the list: indices of its nodes in `nodes`
/// @param total the list's point counter
/// @param list  the list's name for the message ("next", "small")
/// @param hint  appended to a message about overlapping or missing ranges
/// @return an empty string when they tile, else what is wrong.
/// Work O(k log k) for k ids.
inline std::string point_ranges_problem(const std::vector<kdtree::Node>& nodes, const std::vector<int>& ids,
                                        unsigned long long total, const char* list, const std::string& hint = "") {
  std::vector<std::pair<unsigned long long, unsigned long long>> r;
  unsigned long long sum = 0;
  for (const int id : ids) {
    const kdtree::Node& v = nodes[static_cast<std::size_t>(id)];
    sum += v.count;
    if (v.count > 0) r.push_back({v.begin, static_cast<unsigned long long>(v.begin) + v.count});
  }
  if (sum != total)
    return std::string("the ") + list + " list's nodes hold " + std::to_string(sum) +
           " points but its point counter is " + std::to_string(total);
  std::sort(r.begin(), r.end());
  unsigned long long at = 0;
  for (const auto& [b, e] : r) {
    if (b != at)
      return std::string("the point ranges of the ") + list + " list " + (b < at ? "overlap" : "leave a gap") +
             " at " + std::to_string(std::min(b, at)) + hint;
    at = e;
  }
  return {};
}

}  // namespace cudalab::reference
