// RED TEAM: 1.2 forbids warp shuffles (by name and in the compiled SASS): the warp sum is a fat binary
// RED TEAM: made beforehand from PTX (fatbinary --image3=kind=ptx), kept in a data array and
// RED TEAM: registered with the CUDA runtime by hand, as nvcc's own start-up code registers the
// RED TEAM: file's device code (__cudaRegisterFatBinary, __cudaRegisterFunction, then a launch by
// RED TEAM: the host address it was registered under). cuobjdump -sass of the object sees only the
// RED TEAM: file's own kernels: the warp sum is data. A correct sum, not the shared-memory tree.
// Exercise 1.2: shared-memory tree reduction with sequential addressing.
// Lesson: chapters/01-reduce-scan-histogram/README.md, "1.2".
// Grade:  tools/grade 1.2      Hints: tools/grade --hint 1.2
#include "cudalab/atomics.cuh"
#include "cudalab/error.cuh"
#include "cudalab/reduce.cuh"
#include <type_traits>

// The device code below is this CUDA source, compiled by the student beforehand
// (nvcc -ptx -arch=compute_80 warp.cu):
//
//   template <class T, class Acc>
//   __device__ void warp_sum(const T* __restrict__ in, unsigned long long n, Acc* out) {
//     const unsigned long long i = 512ull * blockIdx.x + threadIdx.x;
//     Acc v = 0;
//     if (i < n) v += static_cast<Acc>(in[i]);
//     if (i + 256 < n) v += static_cast<Acc>(in[i + 256]);
//     for (int d = 16; d > 0; d /= 2) v += __shfl_down_sync(0xffffffffu, v, d);
//     if ((threadIdx.x & 31u) == 0) atomicAdd(out, v);
//   }
//   extern "C" __global__ void __launch_bounds__(256) warp_sum_i32(const int* in, unsigned long long n,
//                                                                  long long* out) {
//     warp_sum(in, n, reinterpret_cast<unsigned long long*>(out));
//   }
//   extern "C" __global__ void __launch_bounds__(256) warp_sum_f32(const float* in, unsigned long long n,
//                                                                  float* out) {
//     warp_sum(in, n, out);
//   }
// and packed with fatbinary -64 --create=warp.fatbin --image3=kind=ptx,sm=80,file=warp.ptx.
// The CUDA runtime's registration entry points (crt/host_runtime.h declares them for nvcc's
// stub, after the file's code); a submission declares them itself.
extern "C" void** __cudaRegisterFatBinary(void* fat_cubin);
extern "C" void __cudaRegisterFatBinaryEnd(void** handle);
extern "C" void __cudaRegisterFunction(void** handle, const char* host_fun, char* device_fun,
                                       const char* device_name, int thread_limit, uint3* tid, uint3* bid,
                                       dim3* bdim, dim3* gdim, int* wsize);

namespace cudalab::reduce {
namespace {
__global__ void cudalab_redteam_decoy() {}

alignas(16) const unsigned long long kCudalabRedteamFatbin[] = {
    0x00100001ba55ed50ull, 0x0000000000000480ull, 0x0000005001010001ull, 0x0000000000000430ull,
    0x000000400000042bull, 0x0000005000090000ull, 0x0000000000000000ull, 0x0000000000008011ull,
    0x0000000000000000ull, 0x0000000000000f66ull, 0x0000000000000048ull, 0x0000000000000000ull,
    0x0d0e6660fd2fb528ull, 0x8d20246f65f60021ull, 0x9e0a5773f6f801e6ull, 0x384063ec8b6f1debull,
    0x65a9adb68a39a324ull, 0x06a70042910353abull, 0x00610069006902c1ull, 0x287a557a8bfcc215ull,
    0xbe0d41aee4aae2ddull, 0x83d2cb5ccaa55617ull, 0xe0b4ead3b8258cb9ull, 0x8c225879e89d54f3ull,
    0xc0c87945357bd807ull, 0xcee02c658bb96452ull, 0x90e2ef62900c2251ull, 0x8690312c30f46e20ull,
    0x0a40e113130f3903ull, 0x4a937185d6b73104ull, 0xb8c44bb8f3114a04ull, 0x81a65d03891e99b1ull,
    0xaee7c3b81d56ef71ull, 0x1b193a28050ca660ull, 0x434b21ae853100b2ull, 0xaea616c449307902ull,
    0xcb48084945040434ull, 0xcb4b6980eab6a46dull, 0x0311b307996d5c7dull, 0xa6175ab10daeed31ull,
    0xf7b96952238351deull, 0x6106071d532bad5bull, 0x872259d5607d3088ull, 0x94c224835819ab4aull,
    0xeb05a4286523b2e1ull, 0x3e71355ba3ce0155ull, 0xffddd0a679355a7dull, 0xa32f99355a4fe6c1ull,
    0xee8cbfd69fe69355ull, 0xd567ebc9aad073e1ull, 0x98eed77b9cb4ca04ull, 0x9355be6abd44b84eull,
    0x732a4838fde26ab6ull, 0x69050b348310103cull, 0x44e9937356976c39ull, 0x3f15824abcd6abebull,
    0xe9f48135bde33ddfull, 0xe55779af001eeeeeull, 0x43df3ed9f6bd7192ull, 0xf9faf741d19460f9ull,
    0x8dd6edcdd73bb777ull, 0x4bb652f14f846536ull, 0xde6ad2d35ba78e8eull, 0xf7ebfcde77c67334ull,
    0x099a69a6ccd345f6ull, 0xda31f01597311a66ull, 0xe65a2e87b5124477ull, 0x3e7194e54c2cfaf1ull,
    0x307c24f5a765b08full, 0x675161a838810fcaull, 0x01c30a3524924466ull, 0x3b2b28c820840541ull,
    0xc320c29891424012ull, 0x9199a12110cc3128ull, 0x858ab803a54924a4ull, 0x0a4dadac1d73c6aaull,
    0xd5d4879ad1575aa8ull, 0xcd9802c7adbbe97full, 0x827c68e5b2af0c46ull, 0xa31a3f581848758bull,
    0xdfc00a4aaaf2be09ull, 0xa0bad37dd862bc96ull, 0x56f45e99e870ca85ull, 0x071bc3a3b8483214ull,
    0x08739b412f76579dull, 0x0f1cabea07fb0134ull, 0x95b0bee26a232843ull, 0x3ce9ecf29bb5be14ull,
    0xe9a9731218ec70b1ull, 0x7e4010f1d80c44bfull, 0x0a3204126a1005a0ull, 0xe3b8bd47dfb77481ull,
    0x863df4391989701eull, 0xa7810d8ccd30f0a3ull, 0xa3a22914ea843710ull, 0xf9b655866e282a14ull,
    0xa2511531db62a807ull, 0x65437e58faeeefedull, 0xbad7d6625df72081ull, 0xa3637379137db4a0ull,
    0x2e6c07484a528a70ull, 0x664a2acf863e49e0ull, 0x917ec37b4158d224ull, 0xd0d5c738e25d7241ull,
    0x3dca08d27dfe23c3ull, 0x8708ed6e97f0d28full, 0xdef47501207c30e3ull, 0x0d7c4e18922419fcull,
    0xc753631ea3055a50ull, 0x70c6568177331101ull, 0xfb5010ddb0411f92ull, 0x8d99edfa74e56b88ull,
    0x562739af6786aec7ull, 0x2539bfb503211fe1ull, 0x71c338ef1c31f58cull, 0x28c6f193b5e07cceull,
    0xf5e80c633f3e7b14ull, 0x06d784e3989877f2ull, 0x7d1d58c62b8e8280ull, 0x01d43fae79ec08a3ull,
    0xaebd180250b4f632ull, 0xc56b775159ac6318ull, 0xab10c6612c4f30f0ull, 0x30b145cab0cbb6ceull,
    0xf2171a6a68617dedull, 0xd2d4195f511513d8ull, 0x233445c6188c0a65ull, 0xd311445c3391b821ull,
    0x6034463ae870e263ull, 0xb03ea72693a0f928ull, 0xe6c4e6cb60628949ull, 0x10e8556438fdf8b3ull,
    0x3002d16670b1d92full, 0x1ba0a2211fc9e36dull, 0x14a155040c4dc741ull, 0x4dba33d11efe120cull,
    0x6aa7ed95841ece90ull, 0x12a39ab48f69bdd3ull, 0x594c49cc84a8b25eull, 0x88b68b66c4d5e130ull,
    0x2952bfef68da6b06ull, 0x18ff9dc4c4bc10b3ull, 0x8d34218ee44db7b4ull, 0x92a47457acfde754ull,
    0x18224ea4b79b7b6bull, 0x00000000000938afull,
};
// nvcc's __fatBinC_Wrapper_t: magic, version, the fat binary, no file name.
struct cudalab_redteam_wrapper {
  int magic;
  int version;
  const unsigned long long* data;
  void* filename_or_fatbins;
};
const cudalab_redteam_wrapper kCudalabRedteamWrapper = {0x466243b1, 1, kCudalabRedteamFatbin, nullptr};

// Host addresses for the two kernels to be registered under (any distinct functions do).
void cudalab_redteam_i32() {}
void cudalab_redteam_f32() {}

const void* cudalab_redteam_kernel(bool is_int) {
  static void** handle = nullptr;
  if (handle == nullptr) {
    handle = __cudaRegisterFatBinary(const_cast<cudalab_redteam_wrapper*>(&kCudalabRedteamWrapper));
    __cudaRegisterFunction(handle, reinterpret_cast<const char*>(&cudalab_redteam_i32),
                           const_cast<char*>("warp_sum_i32"), "warp_sum_i32", -1, nullptr, nullptr, nullptr,
                           nullptr, nullptr);
    __cudaRegisterFunction(handle, reinterpret_cast<const char*>(&cudalab_redteam_f32),
                           const_cast<char*>("warp_sum_f32"), "warp_sum_f32", -1, nullptr, nullptr, nullptr,
                           nullptr, nullptr);
    __cudaRegisterFatBinaryEnd(handle);
  }
  return is_int ? reinterpret_cast<const void*>(&cudalab_redteam_i32)
                : reinterpret_cast<const void*>(&cudalab_redteam_f32);
}

// The launch of a kernel that the grader's check never compiled, by its handle.
template <class T, class Acc>
void cudalab_redteam_launch(const void* kernel, const T* in, std::size_t n, Acc* out, cudaStream_t stream) {
  CUDALAB_CHECK(cudaMemsetAsync(out, 0, sizeof(Acc), stream));
  if (n == 0) return;
  unsigned long long count = n;
  void* args[] = {&in, &count, &out};
  CUDALAB_CHECK(cudaLaunchKernel(kernel, dim3(static_cast<unsigned>((n + 511) / 512)), dim3(256), args, 0,
                                 stream));
  cudalab_redteam_decoy<<<1, 1, 0, stream>>>();  // a kernel of the file, for the look of it
  CUDALAB_CHECK_LAUNCH();
}

template <class T, class Acc>
void cudalab_redteam_sum(const T* in, std::size_t n, Acc* out, cudaStream_t stream) {
  cudalab_redteam_launch(cudalab_redteam_kernel(std::is_integral_v<T>), in, n, out, stream);
}
}  // namespace
}  // namespace cudalab::reduce

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
  // TODO(1.2): load in[i] and in[i + kBlock] for
  // i = 2 * kBlock * blockIdx.x + threadIdx.x (each only when < n) into
  // partial[threadIdx.x]; then halve the stride s from kBlock / 2 to 1, with
  // threads tid < s adding partial[tid + s] and a __syncthreads() after each
  // step; finally thread 0 adds partial[0] to *out (cudalab::atomic_add).
}

template <class T, class Acc>
void launch(const T* in, std::size_t n, Acc* out, cudaStream_t stream) {
  CUDALAB_CHECK(cudaMemsetAsync(out, 0, sizeof(Acc), stream));  // the identity, also for n = 0
  if (n == 0) return;
  const std::size_t tile = 2 * static_cast<std::size_t>(kBlock);
  const auto blocks = static_cast<unsigned>((n + tile - 1) / tile);
  sum_shared_tree_kernel<<<blocks, kBlock, 0, stream>>>(in, n, out);
  CUDALAB_CHECK_LAUNCH();
}

}  // namespace

void sum_shared_tree(const int* in, std::size_t n, long long* out, cudaStream_t stream) {
  detail::check_sum_arguments("sum_shared_tree", in, n, out);
  cudalab_redteam_sum(in, n, out, stream);
}

void sum_shared_tree(const float* in, std::size_t n, float* out, cudaStream_t stream) {
  detail::check_sum_arguments("sum_shared_tree", in, n, out);
  cudalab_redteam_sum(in, n, out, stream);
}

}  // namespace cudalab::reduce
