// Benchmark of cudalab::kdtree::complete_nodes (7.5) on the 4096 nodes of a
// level of 2,000,000 uniform points (the size in the name is the level's
// point count, as in the other benchmarks of the chapter; items/s counts
// points), beside the chapter's baselines in the same run. Each run resets
// the node stack, the lists and the point counters first (four small
// memsets and a copy, included in the time). Every call gets new parents
// (new random cells with the reference's splits, the level's counts) and
// new right counts, uniform in [count/4, count − count/4] (about what a
// median split gives: every child is large, as in the level); the last
// call's node array, lists and counters are checked as the tests of 7.5 do.
#include <algorithm>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kdtree_bench.cuh"

namespace {
using cudalab::bench::kdtree::DeviceLevel;
using cudalab::kdtree::Box;
using cudalab::kdtree::Node;

constexpr std::size_t kThreshold = 32;
constexpr int kMaxDepth = 64;

// The node stack (the m parents, then room for their 2m children), the lists, the counters and the inputs.
struct State {
  explicit State(std::size_t m)
      : nodes(3 * m), next(2 * m), small(2 * m), counters(2), rights(m),
        used(std::vector<long long>{static_cast<long long>(m)}) {}
  cudalab::stack::Stack<Node> nodes;
  cudalab::stack::Stack<int> next, small;
  cudalab::DeviceBuffer<unsigned long long> counters;  ///< next_points, small_points
  cudalab::DeviceBuffer<std::uint32_t> rights;
  cudalab::DeviceBuffer<long long> used;  ///< m, the node count before a call
  std::vector<Node> parents;              ///< the parents of the last refresh (host)
  std::vector<std::uint32_t> host_rights;  ///< their right counts
};

// One state per level size, allocated at the first run.
State& state(std::size_t m) {
  static std::map<std::size_t, State> all;
  return all.try_emplace(m, m).first->second;
}

// New parents (random cells, the reference's splits, the level's counts, depth 12) and right counts.
void refresh_parents(const DeviceLevel& L, State& S, cudaStream_t s) {
  std::mt19937_64 rng(cudalab::bench::next_seed());
  S.parents = L.cells;
  S.host_rights.resize(L.m);
  for (std::size_t k = 0; k < L.m; ++k) {
    Node& v = S.parents[k];
    v.box = cudalab::bench::kdtree::random_cell(rng);
    const auto [axis, split] = cudalab::reference::select_split(v.box);
    v.axis = axis;
    v.split = split;
    v.left = v.right = -1;
    const unsigned lo = v.count / 4, hi = v.count - v.count / 4;
    S.host_rights[k] = lo + static_cast<unsigned>(rng() % (hi - lo + 1));
  }
  CUDALAB_CHECK(cudaMemcpyAsync(S.nodes.data(), S.parents.data(), L.m * sizeof(Node), cudaMemcpyHostToDevice, s));
  CUDALAB_CHECK(
      cudaMemcpyAsync(S.rights.data(), S.host_rights.data(), L.m * sizeof(std::uint32_t), cudaMemcpyHostToDevice, s));
}

// "" when the last call completed every parent as 7.5 promises (the checks of its tests), else the first problem.
std::string check_children(std::size_t m, State& S) {
  const std::size_t capacity = 3 * m;
  if (S.nodes.counter() != static_cast<long long>(capacity))
    return "node count " + std::to_string(S.nodes.counter()) + ", expected " + std::to_string(capacity) +
           " (2 per active node)";
  if (S.nodes.view().flags() != 0 || S.next.view().flags() != 0 || S.small.view().flags() != 0)
    return "an error flag is set although every array has room";
  const std::vector<Node> got = S.nodes.contents();
  const long long n_next = S.next.counter(), n_small = S.small.counter();
  if (n_next < 0 || n_small < 0 || static_cast<std::size_t>(n_next + n_small) != 2 * m)
    return std::to_string(n_next) + " next and " + std::to_string(n_small) + " small children for " +
           std::to_string(2 * m);
  const std::vector<int> next_ids = S.next.contents(), small_ids = S.small.contents();
  std::vector<char> listed(capacity, 0), in_next(capacity, 0);
  for (const std::vector<int>* list : {&next_ids, &small_ids})
    for (const int id : *list) {
      if (id < static_cast<int>(m) || id >= static_cast<int>(capacity) || listed[static_cast<std::size_t>(id)])
        return "a list holds " + std::to_string(id) + ": pushed twice, or not a new child's slot";
      listed[static_cast<std::size_t>(id)] = 1;
      in_next[static_cast<std::size_t>(id)] = list == &next_ids ? 1 : 0;
    }
  for (std::size_t k = 0; k < m; ++k) {
    const Node& p = got[k];
    if (p.left < static_cast<int>(m) || p.right != p.left + 1 || p.right >= static_cast<int>(capacity))
      return "node " + std::to_string(k) + " has children " + std::to_string(p.left) + ", " + std::to_string(p.right);
    Node want = S.parents[k];
    want.left = p.left;
    want.right = p.right;
    if (std::memcmp(&p, &want, sizeof(Node)) != 0)
      return "node " + std::to_string(k) + ": a field other than left and right changed";
    const std::uint32_t r = S.host_rights[k];
    for (int side = 0; side < 2; ++side) {
      const int id = side == 0 ? p.left : p.right;
      const Node& c = got[static_cast<std::size_t>(id)];
      Box box = want.box;
      cudalab::reference::set_coord(side == 0 ? box.hi : box.lo, want.axis, want.split);
      const unsigned count = side == 0 ? want.count - r : r;
      if (!cudalab::bench::kdtree::same_box(c.box, box) || c.count != count || c.depth != want.depth + 1 ||
          c.axis != -1 || c.left != -1 || c.right != -1)
        return std::string(side == 0 ? "left" : "right") + " child " + std::to_string(id) + " of node " +
               std::to_string(k) + ": cell " + cudalab::bench::kdtree::show(c.box) + ", " + std::to_string(c.count) +
               " points, depth " + std::to_string(c.depth) + ", axis " + std::to_string(c.axis) + "; expected cell " +
               cudalab::bench::kdtree::show(box) + ", " + std::to_string(count) + " points, depth " +
               std::to_string(want.depth + 1) + ", axis, left and right -1";
      const bool large = count > kThreshold && want.depth + 1 < kMaxDepth;
      if ((in_next[static_cast<std::size_t>(id)] != 0) != large)
        return "child " + std::to_string(id) + " with " + std::to_string(count) + " points belongs to the " +
               (large ? "next" : "small") + " list";
    }
  }
  const std::vector<unsigned long long> points = S.counters.download();
  std::string wrong = cudalab::reference::point_ranges_problem(got, next_ids, points[0], "next");
  if (wrong.empty()) wrong = cudalab::reference::point_ranges_problem(got, small_ids, points[1], "small");
  return wrong;
}

const bool registered = [] {
  cudalab::bench::kdtree::register_level(
      "complete_nodes/node",
      [](DeviceLevel& L, cudaStream_t s) {
        State& S = state(L.m);
        CUDALAB_CHECK(
            cudaMemcpyAsync(S.nodes.view().count, S.used.data(), sizeof(long long), cudaMemcpyDeviceToDevice, s));
        S.next.clear(s);
        S.small.clear(s);
        S.counters.fill_bytes(0, s);
        cudalab::kdtree::complete_nodes(S.nodes.view(), L.active.data(), S.rights.data(), L.m, kThreshold, kMaxDepth,
                                        S.next.view(), S.small.view(), S.counters.data(), S.counters.data() + 1, s);
      },
      0, {cudalab::bench::kdtree::kPoints},
      [](DeviceLevel& L) {
        cudalab::bench::Fresh fresh;
        fresh.refresh = [&L](cudaStream_t s) { refresh_parents(L, state(L.m), s); };
        fresh.verify = [&L] { return check_children(L.m, state(L.m)); };
        return fresh;
      });
  return true;
}();
}  // namespace
