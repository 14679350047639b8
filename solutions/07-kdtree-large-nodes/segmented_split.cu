// Exercise 7.4: the segmented split: a stable partition of every segment of
// the working array, left entries first, composed from segmented scans.
// Lesson: chapters/07-kdtree-large-nodes/README.md, "7.4".
// Grade:  tools/grade 7.4      Hints: tools/grade --hint 7.4
//
// Given (outside the exercise): the segmented inclusive sum of exercise 7.3
// and the marking of the segments' heads, called through 7.3's API
// (segmented_inclusive_sum, mark_segment_heads): this file is linked with
// 7.3's reference solution (the manifest's `uses`).
#include <cstddef>
#include <cstdint>

#include "cudalab/args.hpp"
#include "cudalab/async_buffer.cuh"
#include "cudalab/error.cuh"
#include "cudalab/kdtree.cuh"

namespace cudalab::kdtree {
namespace {

constexpr int kBlock = 256;  // threads of every kernel of this file

// Given: the flags as 32-bit scan input.
__global__ void widen_kernel(const std::uint8_t* __restrict__ flags, std::size_t n, std::uint32_t* __restrict__ out) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i < n) out[i] = flags[i];
}

// Position i of segment k = owner[i], whose node has begin b and count c:
// right_ranks[i] is the number of right entries in [b, i] (a segmented
// inclusive sum of the flags), right_ranks[b + c - 1] the segment's total.
__global__ void scatter_kernel(const std::uint32_t* __restrict__ in, const std::uint8_t* __restrict__ right_flags,
                               std::size_t n, const Node* __restrict__ nodes, const int* __restrict__ active,
                               const std::uint32_t* __restrict__ owner, const std::uint32_t* __restrict__ right_ranks,
                               std::uint32_t* __restrict__ out) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  // BEGIN SOLUTION
  const Node& node = nodes[active[owner[i]]];
  const std::size_t b = node.begin, c = node.count;
  const std::size_t rights_total = right_ranks[b + c - 1];
  const std::size_t rights_before = right_ranks[i] - right_flags[i];  // exclusive rank among the rights
  const std::size_t dest = right_flags[i] != 0 ? b + (c - rights_total) + rights_before  // after all lefts
                                                : b + (i - b) - rights_before;             // lefts before i
  out[dest] = in[i];
  // STARTER:
  // // TODO(7.4): with node = nodes[active[owner[i]]], b = node.begin, c =
  // // node.count and R = right_ranks[b + c - 1] (the segment's rights), a
  // // left entry goes to b + (its rank among the segment's lefts), a right
  // // one to b + (c - R) + (its rank among the rights); ranks from 0.
  // END SOLUTION
}

}  // namespace

void segmented_split(const std::uint32_t* in, const std::uint8_t* right_flags, std::size_t n, const Node* nodes,
                     const int* active, std::size_t m, std::uint32_t* out, cudaStream_t stream,
                     const std::uint32_t* owners) {
  detail::check_level("segmented_split", n, nodes, active, m);
  require_pointer("segmented_split", "in", in, n);
  require_pointer("segmented_split", "right_flags", right_flags, n);
  require_pointer("segmented_split", "out", out, n);
  if (n == 0) return;
  AsyncBuffer<std::uint8_t> heads(n, stream);
  AsyncBuffer<std::uint32_t> own_owners(owners == nullptr ? n : 0, stream);  // the broadcast, unless given
  AsyncBuffer<std::uint32_t> ranks(n, stream);
  CUDALAB_CHECK(cudaMemsetAsync(heads.data(), 0, n, stream));
  if (owners == nullptr) CUDALAB_CHECK(cudaMemsetAsync(own_owners.data(), 0, n * sizeof(std::uint32_t), stream));
  mark_segment_heads(nodes, active, m, heads.data(), own_owners.data(), stream);
  if (owners == nullptr) {
    segmented_inclusive_sum(own_owners.data(), heads.data(), n, own_owners.data(), stream);
    owners = own_owners.data();
  }
  const auto blocks = static_cast<unsigned>((n + kBlock - 1) / kBlock);
  widen_kernel<<<blocks, kBlock, 0, stream>>>(right_flags, n, ranks.data());
  CUDALAB_CHECK_LAUNCH();
  segmented_inclusive_sum(ranks.data(), heads.data(), n, ranks.data(), stream);
  scatter_kernel<<<blocks, kBlock, 0, stream>>>(in, right_flags, n, nodes, active, owners, ranks.data(), out);
  CUDALAB_CHECK_LAUNCH();
}

}  // namespace cudalab::kdtree
