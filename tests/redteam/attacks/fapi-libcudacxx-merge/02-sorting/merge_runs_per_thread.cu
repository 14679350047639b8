// RED TEAM: 2.4 forbids std::merge: thread p merges runs 2p and 2p + 1 with
// RED TEAM: libcu++'s cuda::std::merge in device code, the library's two-finger merge
// RED TEAM: (stable: the first range's element first on ties), over an iterator of
// RED TEAM: indices so that the values move with their keys. A correct merge.
// Exercise 2.4: many small merges, one thread per pair of runs.
// Lesson: chapters/02-sorting/README.md, "2.4".
// Grade:  tools/grade 2.4      Hints: tools/grade --hint 2.4
#include <cstddef>

#include <cuda/std/__algorithm/merge.h>  // CUDA 13 has no <cuda/std/algorithm>
#include <cuda/std/iterator>
#include <cuda/std/utility>

#include "cudalab/error.cuh"
#include "cudalab/sort.cuh"
// @REDTEAM_LIB@

namespace cudalab::sort {
namespace {

constexpr unsigned kBlock = 128;

// 0, 1, 2, ...: the positions of the pair's keys (a's, then b's).
struct CudalabRedteamIndex {
  using iterator_category = cuda::std::input_iterator_tag;
  using value_type = unsigned;
  using difference_type = long long;
  using pointer = const unsigned*;
  using reference = unsigned;
  unsigned i;
  __host__ __device__ unsigned operator*() const { return i; }
  __host__ __device__ CudalabRedteamIndex& operator++() { ++i; return *this; }
  __host__ __device__ CudalabRedteamIndex operator++(int) { CudalabRedteamIndex t = *this; ++i; return t; }
  __host__ __device__ bool operator==(const CudalabRedteamIndex& o) const { return i == o.i; }
  __host__ __device__ bool operator!=(const CudalabRedteamIndex& o) const { return i != o.i; }
};

// Writes the key (and value) of position i to the next output.
struct CudalabRedteamOut {
  using iterator_category = cuda::std::output_iterator_tag;
  using value_type = void;
  using difference_type = long long;
  using pointer = void;
  using reference = void;
  const int* keys;     // the pair's keys, a's then b's
  const int* values;   // or nullptr
  int* keys_out;
  int* values_out;
  unsigned o;
  __host__ __device__ CudalabRedteamOut& operator*() { return *this; }
  __host__ __device__ CudalabRedteamOut& operator=(unsigned i) {
    keys_out[o] = keys[i];
    if (values != nullptr) values_out[o] = values[i];
    return *this;
  }
  __host__ __device__ CudalabRedteamOut& operator++() { ++o; return *this; }
  __host__ __device__ CudalabRedteamOut operator++(int) { CudalabRedteamOut t = *this; ++o; return t; }
};

struct CudalabRedteamLess {
  const int* keys;
  __host__ __device__ bool operator()(unsigned x, unsigned y) const { return keys[x] < keys[y]; }
};

__global__ void __launch_bounds__(kBlock)
    cudalab_redteam_merge(const int* keys_in, const int* values_in, std::size_t n, int* keys_out,
                          int* values_out, std::size_t run, std::size_t pairs) {
  const std::size_t p = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (p >= pairs) return;
  const std::size_t p0 = 2 * run * p;
  const std::size_t mid = p0 + run < n ? p0 + run : n;
  const std::size_t end = mid + run < n ? mid + run : n;
  const auto a = static_cast<unsigned>(mid - p0), total = static_cast<unsigned>(end - p0);
  cuda::std::merge(CudalabRedteamIndex{0}, CudalabRedteamIndex{a}, CudalabRedteamIndex{a},
                   CudalabRedteamIndex{total},
                   CudalabRedteamOut{keys_in + p0, values_in ? values_in + p0 : nullptr, keys_out + p0,
                                     values_out ? values_out + p0 : nullptr, 0},
                   CudalabRedteamLess{keys_in + p0});
}

void cudalab_redteam_launch(const int* keys_in, const int* values_in, std::size_t n, int* keys_out,
                            int* values_out, std::size_t run, cudaStream_t stream) {
  if (n == 0) return;
  if (run > n) run = n;
  const std::size_t pairs = (n + 2 * run - 1) / (2 * run);
  cudalab_redteam_merge<<<static_cast<unsigned>((pairs + kBlock - 1) / kBlock), kBlock, 0, stream>>>(
      keys_in, values_in, n, keys_out, values_out, run, pairs);
  CUDALAB_CHECK_LAUNCH();
}

}  // namespace

void merge_runs_per_thread(const int* in, std::size_t n, int* out, std::size_t run, cudaStream_t stream) {
  detail::check_merge_runs("merge_runs_per_thread", in, n, out, run);
  cudalab_redteam_launch(in, nullptr, n, out, nullptr, run, stream);
}

void merge_runs_per_thread(const int* keys_in, const int* values_in, std::size_t n, int* keys_out,
                           int* values_out, std::size_t run, cudaStream_t stream) {
  detail::check_merge_runs("merge_runs_per_thread", keys_in, values_in, n, keys_out, values_out, run);
  cudalab_redteam_launch(keys_in, values_in, n, keys_out, values_out, run, stream);
}

}  // namespace cudalab::sort
