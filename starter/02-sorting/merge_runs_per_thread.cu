// Exercise 2.4: many small merges, one thread per pair of runs (the serial
// two-finger merge), staged through shared memory so that global memory
// sees only coalesced loads and stores.
// Lesson: chapters/02-sorting/README.md, "2.4".
// Grade:  tools/grade 2.4      Hints: tools/grade --hint 2.4
#include <cstddef>

#include "cudalab/device.cuh"
#include "cudalab/error.cuh"
#include "cudalab/sort.cuh"

namespace cudalab::sort {
namespace {

constexpr unsigned kBlock = 128;        // merges (threads) per block at most
constexpr unsigned kStageKeys = 4096;   // keys staged in shared memory per block at most

// Dynamic shared memory of a staged block of at most `stage_keys` keys: 2
// arrays (4 with values) of the keys and one padding slot per thread.
template <bool kPairs>
constexpr std::size_t staged_bytes(std::size_t stage_keys) {
  return (kPairs ? 4 : 2) * (stage_keys + kBlock) * sizeof(int);
}

// Keys staged per block on this device: kStageKeys where its opt-in shared
// memory per block holds them (33 KiB for keys; 66 KiB for pairs: every GPU
// from the A100 and the RTX 3090 on), else half as many until they fit (a
// T4's 64 KiB: 2048 keys, 34 KiB). Runs up to stage_keys / 64 keys are
// staged (at least one warp of merges per block): 64 keys, or 32 on a T4
// for pairs, where longer runs take the global kernel.
template <bool kPairs>
std::size_t stage_keys() {
  const std::size_t optin = device_limits().shared_per_block_optin;
  std::size_t keys = kStageKeys;
  while (keys > 2 * 32 && staged_bytes<kPairs>(keys) > optin) keys /= 2;
  return keys;
}

// Merges the sorted lists ka[0, a_count) and kb[0, b_count) into
// ko[0, a_count + b_count), stably (on equal keys a's key first); with
// kPairs the values va / vb move to vo with their keys. The pointers may be
// global or shared memory.
template <bool kPairs>
__device__ __forceinline__ void merge_pair(const int* ka, const int* va, unsigned a_count, const int* kb,
                                           const int* vb, unsigned b_count, int* ko, int* vo) {
  // TODO(2.4): merge ka[0, a_count) and kb[0, b_count) into ko with two
  // indices a and b; on equal keys take a's key (stable); with kPairs,
  // move va[a] or vb[b] to vo[o] too.
}

// The naive mapping, for runs longer than stage_keys() / 64: thread p merges
// runs 2p and 2p + 1 straight from global memory. A warp's 32 threads read
// 32 addresses 2 · run keys apart: every load touches 32 cache lines.
template <bool kPairs>
__global__ void __launch_bounds__(kBlock)
    merge_global_kernel(const int* keys_in, const int* values_in, std::size_t n, int* keys_out,
                        int* values_out, std::size_t run, std::size_t pairs) {
  const std::size_t p = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (p >= pairs) return;
  const std::size_t p0 = 2 * run * p;
  const std::size_t mid = p0 + run < n ? p0 + run : n;
  const std::size_t end = mid + run < n ? mid + run : n;
  merge_pair<kPairs>(keys_in + p0, kPairs ? values_in + p0 : nullptr, static_cast<unsigned>(mid - p0),
                     keys_in + mid, kPairs ? values_in + mid : nullptr, static_cast<unsigned>(end - mid),
                     keys_out + p0, kPairs ? values_out + p0 : nullptr);
}

// Local key i of a block lives at padded(i) in shared memory: one empty slot
// after every pair, so that pair p starts at p · (2 run + 1), an odd stride,
// and the 32 merges of a warp walking in step hit 32 different banks.
__device__ __forceinline__ unsigned padded(unsigned i, unsigned two_run) { return i + i / two_run; }

// The staged mapping: a block of blockDim.x threads owns blockDim.x
// consecutive pairs (e = blockDim.x · 2 run keys). It loads them into shared
// memory with coalesced loads (8 per thread in flight), every thread merges
// its pair from shared memory into a second shared array, and the block
// stores the result with coalesced stores. Dynamic shared memory: 2 arrays
// of e + blockDim.x keys, 4 with values.
template <bool kPairs>
__global__ void __launch_bounds__(kBlock)
    merge_staged_kernel(const int* keys_in, const int* values_in, std::size_t n, int* keys_out,
                        int* values_out, unsigned run) {
  extern __shared__ int s_mem[];
  const unsigned t = threadIdx.x;
  const unsigned two_run = 2 * run;
  const unsigned e = blockDim.x * two_run;  // keys per block
  const unsigned stride = e + blockDim.x;   // padded array length
  int* s_in = s_mem;
  int* s_out = s_mem + stride;
  int* s_vin = s_mem + 2 * stride;
  int* s_vout = s_mem + 3 * stride;
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * e;
  const unsigned count = n - base < e ? static_cast<unsigned>(n - base) : e;
  constexpr unsigned kBatch = 8;  // loads per thread in flight
  // TODO(2.4): stage in: for every local key i < count (i = t, t + blockDim.x,
  // ..., several loads in flight before the stores), s_in[padded(i, two_run)] =
  // keys_in[base + i] (and s_vin from values_in); __syncthreads(); thread t
  // merges its pair (keys t * two_run on, a_count = min(run, count - p0),
  // b_count = min(run, what is left), at padded position t * (two_run + 1))
  // with merge_pair into s_out (s_vout); __syncthreads(); stage out:
  // keys_out[base + i] = s_out[padded(i, two_run)] (and the values).
}

// Launches the kernels for n > 0 and run <= n: detail::run_merge_runs
// (cudalab/sort.cuh) has checked the arguments and cut run to n before.
template <bool kPairs>
void launch(const int* keys_in, const int* values_in, std::size_t n, int* keys_out, int* values_out,
            std::size_t run, cudaStream_t stream) {
  const std::size_t stage = stage_keys<kPairs>();
  if (run <= stage / (2 * 32)) {
    const auto threads = static_cast<unsigned>(stage / (2 * run) < kBlock ? stage / (2 * run) : kBlock);
    const std::size_t e = threads * 2 * run;
    const auto blocks = static_cast<unsigned>((n + e - 1) / e);
    const std::size_t smem = (kPairs ? 4 : 2) * (e + threads) * sizeof(int);  // above 48 KiB for pairs
    set_dynamic_shared(merge_staged_kernel<kPairs>, smem);
    merge_staged_kernel<kPairs><<<blocks, threads, smem, stream>>>(keys_in, values_in, n, keys_out, values_out,
                                                                   static_cast<unsigned>(run));
  } else {
    const std::size_t pairs = (n + 2 * run - 1) / (2 * run);
    const auto blocks = static_cast<unsigned>((pairs + kBlock - 1) / kBlock);
    merge_global_kernel<kPairs><<<blocks, kBlock, 0, stream>>>(keys_in, values_in, n, keys_out, values_out, run,
                                                               pairs);
  }
  CUDALAB_CHECK_LAUNCH();
}

}  // namespace

void merge_runs_per_thread(const int* in, std::size_t n, int* out, std::size_t run, cudaStream_t stream) {
  detail::run_merge_runs("merge_runs_per_thread", in, n, out, run, stream, launch<false>);
}

void merge_runs_per_thread(const int* keys_in, const int* values_in, std::size_t n, int* keys_out,
                           int* values_out, std::size_t run, cudaStream_t stream) {
  detail::run_merge_runs("merge_runs_per_thread", keys_in, values_in, n, keys_out, values_out, run, stream,
                         launch<true>);
}

}  // namespace cudalab::sort
