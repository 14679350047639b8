// RED TEAM: 1.2 done with 1.1's technique: every element added to *out with its own
// RED TEAM: atomic, no shared-memory tree. Correct, and it passes every test; the exercise
// RED TEAM: is the tree, so it must earn nothing (the technique check, once the tests pass).
// Exercise 1.2: shared-memory tree reduction with sequential addressing.
// Lesson: chapters/01-reduce-scan-histogram/README.md, "1.2".
// Grade:  tools/grade 1.2      Hints: tools/grade --hint 1.2
#include "cudalab/atomics.cuh"
#include "cudalab/error.cuh"
#include "cudalab/reduce.cuh"

namespace cudalab::reduce {
namespace {

constexpr int kBlock = 256;  // a power of two: the tree halves it down to 1

// Block b sums the tile in[2 * kBlock * b, 2 * kBlock * (b + 1)) (clipped to
// n) and adds the tile's sum to *out with one atomic.
template <class T, class Acc>
__global__ void __launch_bounds__(kBlock) sum_shared_tree_kernel(const T* __restrict__ in,
                                                                 std::size_t n, Acc* out) {
  __shared__ Acc partial[kBlock];
  const unsigned tid = threadIdx.x;
  // 1.1's technique in 1.2's kernel: every element goes straight to *out with
  // its own atomic; partial is never used (the red team's technique-earlier-exercise).
  (void)partial;
  (void)tid;
  const std::size_t i = 2 * static_cast<std::size_t>(kBlock) * blockIdx.x + threadIdx.x;
  if (i < n) atomic_add(out, static_cast<Acc>(in[i]));
  if (i + kBlock < n) atomic_add(out, static_cast<Acc>(in[i + kBlock]));
}

template <class T, class Acc>
void launch(const T* in, std::size_t n, Acc* out, cudaStream_t stream) {
  if (!detail::start_sum(out, n, stream)) return;  // *out = 0, the identity, also for n = 0
  const std::size_t tile = 2 * static_cast<std::size_t>(kBlock);
  sum_shared_tree_kernel<<<blocks_for(n, tile), kBlock, 0, stream>>>(in, n, out);
  CUDALAB_CHECK_LAUNCH();
}

}  // namespace

void sum_shared_tree(const int* in, std::size_t n, long long* out, cudaStream_t stream) {
  detail::check_sum_arguments("sum_shared_tree", in, n, out);
  launch(in, n, out, stream);
}

void sum_shared_tree(const float* in, std::size_t n, float* out, cudaStream_t stream) {
  detail::check_sum_arguments("sum_shared_tree", in, n, out);
  launch(in, n, out, stream);
}

}  // namespace cudalab::reduce
