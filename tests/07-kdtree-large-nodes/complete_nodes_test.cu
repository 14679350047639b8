// Tests of exercise 7.5, cudalab::kdtree::complete_nodes (suites KdtreeCompleteNodes*).
// Run: tools/grade 7.5   or   build/default/bin/complete_nodes_test_starter
#include <map>
#include <stdexcept>

#include "kdtree_test_util.cuh"

namespace cudalab::test::kdtree {
namespace {

constexpr const char* kExercise = "7.5 complete_nodes";
using cudalab::stack::DeviceStack;
using cudalab::stack::kOverflow;

// A stack view over guarded storage, with its counter set to `count`.
template <class T>
struct GuardedStack {
  Guarded<T> data;
  DeviceBuffer<long long> count;
  DeviceBuffer<unsigned> errors;
  std::size_t capacity;
  GuardedStack(std::size_t cap, long long initial) : data(cap), count(1), errors(1), capacity(cap) {
    count.upload({initial});
    errors.upload({0u});
  }
  DeviceStack<T> view() { return {data.data(), capacity, count.data(), errors.data()}; }
};

struct LevelSetup {
  std::vector<Node> nodes;  // the first `used` slots in use
  std::vector<int> active;
  std::vector<std::uint32_t> rights;
};

// m active nodes among `used` nodes, with splits, counts and right counts
// that make every kind of child: empty, small, large, at max_depth.
LevelSetup make_setup(std::size_t m, std::size_t threshold, int max_depth, std::uint64_t seed) {
  LevelSetup s;
  const std::size_t used = m + 2;
  std::mt19937_64 rng(seed);
  const std::vector<float> u = gen::uniform_real<float>(6 * used, seed, -10.0f, 10.0f);
  for (std::size_t i = 0; i < used; ++i) {
    Node v{};
    v.box.lo = {std::min(u[6 * i], u[6 * i + 3]), std::min(u[6 * i + 1], u[6 * i + 4]), std::min(u[6 * i + 2], u[6 * i + 5])};
    v.box.hi = {std::max(u[6 * i], u[6 * i + 3]), std::max(u[6 * i + 1], u[6 * i + 4]), std::max(u[6 * i + 2], u[6 * i + 5])};
    const auto [axis, split] = reference::select_split(v.box);
    v.axis = axis;
    v.split = split;
    v.left = v.right = -1;
    v.count = static_cast<unsigned>(threshold + 1 + rng() % (4 * threshold + 3));
    v.begin = static_cast<unsigned>(rng() % 1000);
    v.depth = static_cast<int>(rng() % static_cast<unsigned>(max_depth));  // below max_depth: large
    s.nodes.push_back(v);
  }
  std::vector<int> ids(used);
  std::iota(ids.begin(), ids.end(), 0);
  std::shuffle(ids.begin(), ids.end(), rng);
  s.active.assign(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(m));
  for (const int a : s.active) {
    const unsigned c = s.nodes[static_cast<std::size_t>(a)].count;
    const unsigned pick = static_cast<unsigned>(rng() % 5);
    s.rights.push_back(pick == 0 ? 0u : pick == 1 ? c : static_cast<unsigned>(rng() % (c + 1)));
  }
  return s;
}

// What a tiling problem of a list's point ranges most likely means.
constexpr const char* kBeginHint = " (begin must come from an atomicAdd of the child's count)";

void run_case(std::size_t m, std::size_t threshold, int max_depth, std::uint64_t seed) {
  const LevelSetup s = make_setup(m, threshold, max_depth, seed);
  const std::size_t used = s.nodes.size(), capacity = used + 2 * m;
  GuardedStack<Node> nodes(capacity, static_cast<long long>(used));
  nodes.data.upload(s.nodes);
  GuardedStack<int> next(2 * m, 0), small(2 * m, 0);
  DeviceBuffer<int> d_active(s.active);
  DeviceBuffer<std::uint32_t> d_rights(s.rights);
  DeviceBuffer<unsigned long long> next_points(std::vector<unsigned long long>{0}),
      small_points(std::vector<unsigned long long>{0});
  cudalab::kdtree::complete_nodes(nodes.view(), d_active.data(), d_rights.data(), m, threshold, max_depth,
                                  next.view(), small.view(), next_points.data(), small_points.data());
  CUDALAB_CHECK(cudaDeviceSynchronize());
  const std::string ctx = context(kExercise, m, seed) + "\nT = " + std::to_string(threshold) +
                          ", max_depth = " + std::to_string(max_depth) + ": ";
  ASSERT_EQ(nodes.data.guard_damage(), "") << ctx << "the node array";
  ASSERT_EQ(next.data.guard_damage(), "") << ctx << "the next list";
  ASSERT_EQ(small.data.guard_damage(), "") << ctx << "the small list";
  ASSERT_EQ(nodes.count.download()[0], static_cast<long long>(capacity))
      << ctx << "the node count must grow by 2 per active node (one atomicAdd of 2 each)";
  ASSERT_EQ(nodes.errors.download()[0] | next.errors.download()[0] | small.errors.download()[0], 0u)
      << ctx << "an overflow flag is set although every array has room";
  const std::vector<Node> got = nodes.data.download();
  const long long n_next = next.count.download()[0], n_small = small.count.download()[0];
  ASSERT_EQ(static_cast<std::size_t>(n_next + n_small), 2 * m) << ctx << "every child goes to exactly one list";
  const std::vector<int> next_ids = [&] {
    auto v = next.data.download();
    v.resize(static_cast<std::size_t>(n_next));
    return v;
  }();
  const std::vector<int> small_ids = [&] {
    auto v = small.data.download();
    v.resize(static_cast<std::size_t>(n_small));
    return v;
  }();
  std::vector<char> listed(capacity, 0);
  for (const std::vector<int>* list : {&next_ids, &small_ids})
    for (const int id : *list) {
      ASSERT_TRUE(id >= static_cast<int>(used) && id < static_cast<int>(capacity) && !listed[static_cast<std::size_t>(id)])
          << ctx << "a list holds " << id << ": pushed twice, or not a new child's slot";
      listed[static_cast<std::size_t>(id)] = 1;
    }
  std::vector<std::size_t> position(used, m);  // k of each active node, m for the others
  for (std::size_t k = 0; k < m; ++k) position[static_cast<std::size_t>(s.active[k])] = k;
  std::vector<char> in_next_list(capacity, 0);
  for (const int id : next_ids)
    if (id >= 0 && static_cast<std::size_t>(id) < capacity) in_next_list[static_cast<std::size_t>(id)] = 1;
  for (std::size_t i = 0; i < used; ++i) {
    const std::size_t k = position[i];
    Node want = s.nodes[i];
    if (k == m) {
      ASSERT_TRUE(same_bits(got[i], want)) << ctx << "node " << i << " is not active but was changed";
      continue;
    }
    const Node& p = got[i];
    ASSERT_TRUE(p.left >= static_cast<int>(used) && p.right == p.left + 1 && p.right < static_cast<int>(capacity))
        << ctx << "active node " << i << " has children " << p.left << ", " << p.right
        << " (two consecutive new slots, from one atomicAdd of 2 on the node count)";
    want.left = p.left;
    want.right = p.right;
    ASSERT_TRUE(same_bits(p, want)) << ctx << "active node " << i << ": only left and right may change";
    const std::uint32_t r = s.rights[k];
    for (int side = 0; side < 2; ++side) {
      const int id = side == 0 ? p.left : p.right;
      const Node& c = got[static_cast<std::size_t>(id)];
      Box box = want.box;
      if (side == 0) reference::set_coord(box.hi, want.axis, want.split);
      else reference::set_coord(box.lo, want.axis, want.split);
      const unsigned count = side == 0 ? want.count - r : r;
      const bool large = count > threshold && want.depth + 1 < max_depth;
      ASSERT_TRUE(same_bits(c.box, box) && c.count == count && c.depth == want.depth + 1 && c.axis == -1 &&
                  c.left == -1 && c.right == -1)
          << ctx << (side == 0 ? "left" : "right") << " child " << id << " of node " << i << ": expected cell "
          << show(box) << ", " << count << " points, depth " << want.depth + 1 << ", axis/left/right -1; got cell "
          << show(c.box) << ", " << c.count << " points, depth " << c.depth << ", axis " << c.axis << ", children "
          << c.left << ", " << c.right;
      const bool in_next = in_next_list[static_cast<std::size_t>(id)] != 0;
      ASSERT_EQ(in_next, large) << ctx << "child " << id << " with " << count << " points at depth " << c.depth
                                << " belongs to the " << (large ? "next" : "small")
                                << " list (large: count > T and depth < max_depth)";
    }
  }
  using reference::point_ranges_problem;
  EXPECT_EQ(point_ranges_problem(got, next_ids, next_points.download()[0], "next", kBeginHint), "") << ctx;
  EXPECT_EQ(point_ranges_problem(got, small_ids, small_points.download()[0], "small", kBeginHint), "") << ctx;
}

class KdtreeCompleteNodes : public GpuTestWithParam<std::size_t> {};

TEST_P(KdtreeCompleteNodes, Children) {
  const std::size_t m = GetParam();
  CUDALAB_SKIP_IF_ABOVE_MAX_N(m);
  for (const auto& [t, d] : std::vector<std::pair<std::size_t, int>>{{1, 1}, {32, 4}, {32, 64}, {1000, 3}}) {
    run_case(m, t, d, seed());
    if (HasFailure()) return;
  }
}

// The chapter's sizes up to 2^21 + 1 active nodes (a level never has more
// than n / (T + 1); 2^24 nodes would take gigabytes of guarded node array).
INSTANTIATE_TEST_SUITE_P(Sizes, KdtreeCompleteNodes,
                         ::testing::ValuesIn(std::vector<std::size_t>(kSizes.begin(), kSizes.end() - 1)), size_name);

class KdtreeCompleteNodesOverflow : public GpuTest {};

TEST_F(KdtreeCompleteNodesOverflow, NothingPastTheCapacity) {
  // 1000 active nodes, room for 501 children: at most 250 parents get both,
  // the others are marked, and nothing is written past the node array or a list.
  const std::size_t m = 1000;
  const LevelSetup s = make_setup(m, 8, 64, seed());
  const std::size_t used = s.nodes.size(), capacity = used + 501;
  GuardedStack<Node> nodes(capacity, static_cast<long long>(used));
  // The active parents' links start at -7: a parent left without children
  // must be marked -1 by the call, not merely left as it was.
  std::vector<Node> before = s.nodes;
  for (const int a : s.active) before[static_cast<std::size_t>(a)].left = before[static_cast<std::size_t>(a)].right = -7;
  nodes.data.upload(before);
  GuardedStack<int> next(100, 0), small(100, 0);  // lists too small as well
  DeviceBuffer<int> d_active(s.active);
  DeviceBuffer<std::uint32_t> d_rights(s.rights);
  DeviceBuffer<unsigned long long> next_points(std::vector<unsigned long long>{0}),
      small_points(std::vector<unsigned long long>{0});
  cudalab::kdtree::complete_nodes(nodes.view(), d_active.data(), d_rights.data(), m, 8, 64, next.view(), small.view(),
                                  next_points.data(), small_points.data());
  CUDALAB_CHECK(cudaDeviceSynchronize());
  const std::string ctx = context(kExercise, m, seed()) + "\noverflow: ";
  ASSERT_EQ(nodes.data.guard_damage(), "") << ctx << "the node array (a slot past the capacity was written)";
  ASSERT_EQ(next.data.guard_damage(), "") << ctx << "the next list";
  ASSERT_EQ(small.data.guard_damage(), "") << ctx << "the small list";
  EXPECT_EQ(nodes.errors.download()[0] & kOverflow, kOverflow) << ctx << "the node stack's kOverflow flag";
  EXPECT_EQ((next.errors.download()[0] | small.errors.download()[0]) & kOverflow, kOverflow)
      << ctx << "500 children for lists of 100 each: a list's kOverflow flag";
  const std::vector<Node> got = nodes.data.download();
  std::size_t linked = 0;
  unsigned long long linked_points = 0;
  for (const int a : s.active) {
    const Node& p = got[static_cast<std::size_t>(a)];
    if (p.left == -1) {
      EXPECT_EQ(p.right, -1) << ctx << "node " << a << " has one child";
      continue;
    }
    ++linked;
    linked_points += s.nodes[static_cast<std::size_t>(a)].count;
    EXPECT_TRUE(p.left >= static_cast<int>(used) && p.right == p.left + 1 && p.right < static_cast<int>(capacity))
        << ctx << "node " << a << " has children " << p.left << ", " << p.right
        << (p.left == -7 ? " (its links before the call: a parent whose two slots do not fit must get "
                           "left = right = -1)"
                         : "");
  }
  EXPECT_EQ(linked, std::size_t{250}) << ctx << "exactly the parents whose two slots fit get children";
  // Only the children of linked parents are placed: two pushes each, and
  // their parent's points between them.
  const long long pushed = next.count.download()[0] + small.count.download()[0];
  EXPECT_EQ(pushed, 2 * static_cast<long long>(linked))
      << ctx << "the next and small lists' counters add up to " << pushed << " pushes, expected two for each of the "
      << linked << " parents with children: a parent whose slots do not fit places no child (check the slots "
      << "before place())";
  const unsigned long long points = next_points.download()[0] + small_points.download()[0];
  EXPECT_EQ(points, linked_points) << ctx << "next_points + small_points = " << points
                                   << ", expected the points of the parents with children, " << linked_points
                                   << ": a parent whose slots do not fit reserves no range";
}

TEST(KdtreeCompleteNodesArgs, BadArgumentsThrow) {
  long long c = 0;
  unsigned e = 0;
  const DeviceStack<Node> nodes{reinterpret_cast<Node*>(64), 10, &c, &e};
  const DeviceStack<int> list{reinterpret_cast<int*>(64), 10, &c, &e};
  const auto* active = reinterpret_cast<const int*>(4);
  const auto* rights = reinterpret_cast<const std::uint32_t*>(4);
  unsigned long long np = 0, sp = 0;
  using cudalab::kdtree::complete_nodes;
  EXPECT_THROW(complete_nodes(nodes, active, rights, 2, 0, 8, list, list, &np, &sp), std::invalid_argument);  // T = 0
  EXPECT_THROW(complete_nodes(nodes, active, rights, 2, 4, 0, list, list, &np, &sp), std::invalid_argument);  // depth
  EXPECT_THROW(complete_nodes(nodes, nullptr, rights, 2, 4, 8, list, list, &np, &sp), std::invalid_argument);
  EXPECT_THROW(complete_nodes(nodes, active, nullptr, 2, 4, 8, list, list, &np, &sp), std::invalid_argument);
  EXPECT_THROW(complete_nodes(nodes, active, rights, 2, 4, 8, list, list, nullptr, &sp), std::invalid_argument);
  EXPECT_THROW(complete_nodes(nodes, active, rights, 2, 4, 8, list, list, &np, nullptr), std::invalid_argument);
  DeviceStack<Node> no_data = nodes;
  no_data.data = nullptr;
  EXPECT_THROW(complete_nodes(no_data, active, rights, 2, 4, 8, list, list, &np, &sp), std::invalid_argument);
  DeviceStack<int> no_count = list;
  no_count.count = nullptr;
  EXPECT_THROW(complete_nodes(nodes, active, rights, 2, 4, 8, no_count, list, &np, &sp), std::invalid_argument);
  EXPECT_THROW(complete_nodes(nodes, active, rights, cudalab::kdtree::max_points + 1, 4, 8, list, list, &np, &sp),
               std::invalid_argument);
}

}  // namespace
}  // namespace cudalab::test::kdtree
