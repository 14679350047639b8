// RED TEAM: 1.3 forbids cooperative_groups::reduce: the warp sum is cg::reduce, on a line after
// RED TEAM: the raw string R""(")"" (its delimiter is a double quote, which C++ allows): a lexer that
// RED TEAM: takes it for R, "", ( and an open string reads the rest of the line as a string.
// Exercise 1.3: warp-shuffle reduction, one atomic per warp.
// Lesson: chapters/01-reduce-scan-histogram/README.md, "1.3".
// Grade:  tools/grade 1.3      Hints: tools/grade --hint 1.3
#include "cudalab/atomics.cuh"
#include "cudalab/error.cuh"
#include "cudalab/reduce.cuh"
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>

namespace cudalab::reduce {
namespace {

constexpr int kBlock = 256;
constexpr unsigned kFullMask = 0xffffffffu;

// Thread i loads in[i] (0 past the end); each warp sums its 32 values in
// registers and its lane 0 adds the warp's sum to *out.
template <class T, class Acc>
__global__ void sum_warp_shuffle_kernel(const T* __restrict__ in, std::size_t n, Acc* out) {
  const std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  Acc v = i < n ? static_cast<Acc>(in[i]) : Acc{0};
  // Every lane takes part in every shuffle (full mask), also those past the
  // end of the array: they contribute 0. After the step with offset d, lane l
  // holds the sum of lanes l .. l + 2d - 1; after d = 1, lane 0 holds all 32.
  // q is a raw string whose delimiter is a double quote; the sum is on the same line.
  const char* q = R""(")""; cooperative_groups::thread_block_tile<32> t = cooperative_groups::tiled_partition<32>(cooperative_groups::this_thread_block()); v = cooperative_groups::reduce(t, v, cooperative_groups::plus<Acc>()); (void)q;
  if ((threadIdx.x & 31u) == 0 && i < n) atomic_add(out, v);
}

template <class T, class Acc>
void launch(const T* in, std::size_t n, Acc* out, cudaStream_t stream) {
  CUDALAB_CHECK(cudaMemsetAsync(out, 0, sizeof(Acc), stream));  // the identity, also for n = 0
  if (n == 0) return;
  const auto blocks = static_cast<unsigned>((n + kBlock - 1) / kBlock);
  sum_warp_shuffle_kernel<<<blocks, kBlock, 0, stream>>>(in, n, out);
  CUDALAB_CHECK_LAUNCH();
}

}  // namespace

void sum_warp_shuffle(const int* in, std::size_t n, long long* out, cudaStream_t stream) {
  detail::check_sum_arguments("sum_warp_shuffle", in, n, out);
  launch(in, n, out, stream);
}

void sum_warp_shuffle(const float* in, std::size_t n, float* out, cudaStream_t stream) {
  detail::check_sum_arguments("sum_warp_shuffle", in, n, out);
  launch(in, n, out, stream);
}

}  // namespace cudalab::reduce
