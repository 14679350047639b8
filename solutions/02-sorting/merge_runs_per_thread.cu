// Exercise 2.4: many small merges, one thread per pair of runs (the serial
// two-finger merge).
// Lesson: chapters/02-sorting/README.md, "2.4".
// Grade:  tools/grade 2.4      Hints: tools/grade --hint 2.4
#include <cstddef>

#include "cudalab/error.cuh"
#include "cudalab/sort.cuh"

namespace cudalab::sort {
namespace {

constexpr unsigned kBlock = 128;

// Thread p merges runs 2p and 2p + 1: a = [p0, mid), b = [mid, end) with
// p0 = 2p * run, mid = min(n, p0 + run), end = min(n, mid + run).
// kPairs: values move with their keys (values_in / values_out may be null otherwise).
template <bool kPairs>
__global__ void __launch_bounds__(kBlock)
    merge_per_thread_kernel(const int* keys_in, const int* values_in, std::size_t n, int* keys_out,
                            int* values_out, std::size_t run, std::size_t pairs) {
  const std::size_t p = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (p >= pairs) return;
  const std::size_t p0 = 2 * run * p;
  const std::size_t mid = p0 + run < n ? p0 + run : n;
  const std::size_t end = mid + run < n ? mid + run : n;
  // BEGIN SOLUTION
  std::size_t a = p0, b = mid;
  for (std::size_t o = p0; o < end; ++o) {
    // Take from b only when its key is strictly smaller: equal keys come from
    // the first run first (stable).
    const bool take_b = a >= mid || (b < end && keys_in[b] < keys_in[a]);
    const std::size_t from = take_b ? b++ : a++;
    keys_out[o] = keys_in[from];
    if constexpr (kPairs) values_out[o] = values_in[from];
  }
  // STARTER:
  // // TODO(2.4): merge keys_in[p0, mid) and keys_in[mid, end) into
  // // keys_out[p0, end) with two indices; on equal keys take the first run's
  // // key (stable); with kPairs, move values_in[from] to values_out[o] too.
  // (void)end;
  // END SOLUTION
}

template <bool kPairs>
void launch(const int* keys_in, const int* values_in, std::size_t n, int* keys_out, int* values_out,
            std::size_t run, cudaStream_t stream) {
  if (n == 0) return;
  if (run > n) run = n;  // one run: the merge is a copy
  const std::size_t pairs = (n + 2 * run - 1) / (2 * run);
  const auto blocks = static_cast<unsigned>((pairs + kBlock - 1) / kBlock);
  merge_per_thread_kernel<kPairs><<<blocks, kBlock, 0, stream>>>(keys_in, values_in, n, keys_out,
                                                                 values_out, run, pairs);
  CUDALAB_CHECK_LAUNCH();
}

}  // namespace

void merge_runs_per_thread(const int* in, std::size_t n, int* out, std::size_t run, cudaStream_t stream) {
  detail::check_run("merge_runs_per_thread", run);
  detail::check_sort_arguments("merge_runs_per_thread", in, n, out);
  detail::check_not_in_place("merge_runs_per_thread", "the", in, out, n);
  launch<false>(in, nullptr, n, out, nullptr, run, stream);
}

void merge_runs_per_thread(const int* keys_in, const int* values_in, std::size_t n, int* keys_out,
                           int* values_out, std::size_t run, cudaStream_t stream) {
  detail::check_run("merge_runs_per_thread", run);
  detail::check_sort_arguments("merge_runs_per_thread", keys_in, n, keys_out);
  detail::check_sort_arguments("merge_runs_per_thread", values_in, n, values_out);
  detail::check_not_in_place("merge_runs_per_thread", "the key", keys_in, keys_out, n);
  detail::check_not_in_place("merge_runs_per_thread", "the value", values_in, values_out, n);
  launch<true>(keys_in, values_in, n, keys_out, values_out, run, stream);
}

}  // namespace cudalab::sort
