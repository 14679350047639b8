// The runner of the remote-checks host test: the "student" object of api.hpp
// and its registration (what remote_serve.cu and a student's object are for
// an exercise). Each mistake is one `where` or `how`, so one runner serves
// both the right and the wrong calls.
#include <stdexcept>
#include <vector>

#include "api.hpp"
#include "cudalab/error.cuh"
#include "cudalab/test/remote.hpp"

namespace cudalab::remote_checks {

namespace {
struct Values {
  int value[kLimitCount];
};
__global__ void fill_kernel(int* data, int n, int value) {
  if (static_cast<int>(threadIdx.x) < n) data[threadIdx.x] = value;
}
__global__ void sized_kernel(int* flag) {
  extern __shared__ int words[];
  words[threadIdx.x] = static_cast<int>(threadIdx.x);
  __syncthreads();
  if (threadIdx.x == 0) *flag = words[blockDim.x - 1] == static_cast<int>(blockDim.x) - 1 ? 1 : 0;
}
__global__ void store_kernel(int* data, Values v) {
  for (int i = 0; i < kLimitCount; ++i) {
    if (i != kSizedLaunch) data[i] = v.value[i];  // sized_kernel writes its own flag
  }
}
}  // namespace

void limits(int* data, cudaStream_t stream) {
  int device = 0;
  CUDALAB_CHECK(cudaGetDevice(&device));
  cudaDeviceProp prop{};
  CUDALAB_CHECK(cudaGetDeviceProperties(&prop, device));
  Values v{};
  CUDALAB_CHECK(cudaDeviceGetAttribute(&v.value[kAttrOptin], cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  v.value[kPropOptin] = static_cast<int>(prop.sharedMemPerBlockOptin);
  CUDALAB_CHECK(cudaDeviceGetAttribute(&v.value[kAttrSms], cudaDevAttrMultiProcessorCount, device));
  v.value[kPropSms] = prop.multiProcessorCount;
  CUDALAB_CHECK(cudaDeviceGetAttribute(&v.value[kAttrThreadsPerSm], cudaDevAttrMaxThreadsPerMultiProcessor, device));
  CUDALAB_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&v.value[kOccupancy], fill_kernel, 1024, 0));
  std::size_t available = 0;
  CUDALAB_CHECK(cudaOccupancyAvailableDynamicSMemPerBlock(&available, sized_kernel, 1, 1024));
  v.value[kAvailableDynamic] = static_cast<int>(available);
  // Sized from the attribute, as a student may write it: as much shared memory as a block can have.
  const int bytes = v.value[kAttrOptin];
  CUDALAB_CHECK(cudaFuncSetAttribute(sized_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  sized_kernel<<<1, 1024, static_cast<std::size_t>(bytes), stream>>>(data + kSizedLaunch);
  CUDALAB_CHECK_LAUNCH();
  store_kernel<<<1, 1, 0, stream>>>(data, v);
  CUDALAB_CHECK_LAUNCH();
}

void fill(int* data, int n, int value, int where, cudaStream_t stream) {
  switch (where) {
    case kGiven:
      fill_kernel<<<1, 1024, 0, stream>>>(data, n, value);
      break;
    case kNoStream:
      fill_kernel<<<1, 1024>>>(data, n, value);
      break;
    case kStreamZero:
      fill_kernel<<<1, 1024, 0, 0>>>(data, n, value);
      break;
    case kLegacy:
      fill_kernel<<<1, 1024, 0, cudaStreamLegacy>>>(data, n, value);
      break;
    case kPerThread:
      fill_kernel<<<1, 1024, 0, cudaStreamPerThread>>>(data, n, value);
      break;
    case kLaunchKernelZero: {
      void* args[] = {&data, &n, &value};
      CUDALAB_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(fill_kernel), dim3(1), dim3(1024), args, 0,
                                     nullptr));
      break;
    }
    case kOwnStream: {
      cudaStream_t own = nullptr;
      cudaEvent_t ready = nullptr, done = nullptr;
      CUDALAB_CHECK(cudaStreamCreateWithFlags(&own, cudaStreamNonBlocking));
      CUDALAB_CHECK(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
      CUDALAB_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
      CUDALAB_CHECK(cudaEventRecord(ready, stream));
      CUDALAB_CHECK(cudaStreamWaitEvent(own, ready, 0));
      fill_kernel<<<1, 1024, 0, own>>>(data, n, value);
      CUDALAB_CHECK_LAUNCH();
      CUDALAB_CHECK(cudaEventRecord(done, own));
      CUDALAB_CHECK(cudaStreamWaitEvent(stream, done, 0));
      CUDALAB_CHECK(cudaEventDestroy(ready));
      CUDALAB_CHECK(cudaEventDestroy(done));
      CUDALAB_CHECK(cudaStreamDestroy(own));
      return;
    }
    case kMemsetNoStream:
      CUDALAB_CHECK(cudaMemsetAsync(data, value & 0xFF, static_cast<std::size_t>(n) * sizeof(int)));
      return;
    case kMemcpyNoStream:
      fill_kernel<<<1, 1024, 0, stream>>>(data, n / 2, value);
      CUDALAB_CHECK_LAUNCH();
      CUDALAB_CHECK(cudaMemcpyAsync(data + n / 2, data, static_cast<std::size_t>(n / 2) * sizeof(int),
                                    cudaMemcpyDeviceToDevice));
      return;
    default:
      throw std::invalid_argument("fill: unknown where");
  }
  CUDALAB_CHECK_LAUNCH();
}

void scratch(std::size_t bytes, int how, cudaStream_t stream) {
  static void* cache = nullptr;          // kCached: allocated once, kept for the runner's life
  static std::vector<void*> leaked;      // kLeak...: what kFreeLeaked frees
  static std::vector<void*> leaked_async;
  void* p = nullptr;
  switch (how) {
    case kFreed:
      CUDALAB_CHECK(cudaMalloc(&p, bytes));
      CUDALAB_CHECK(cudaFree(p));
      return;
    case kFreedAsync:
      CUDALAB_CHECK(cudaMallocAsync(&p, bytes, stream));
      CUDALAB_CHECK(cudaFreeAsync(p, stream));
      return;
    case kCached:
      if (cache == nullptr) CUDALAB_CHECK(cudaMalloc(&cache, bytes));
      return;
    case kLeak:
      CUDALAB_CHECK(cudaMalloc(&p, bytes));
      leaked.push_back(p);
      return;
    case kLeakAsync:
      CUDALAB_CHECK(cudaMallocAsync(&p, bytes, stream));
      leaked_async.push_back(p);
      return;
    case kLeakThenThrow:
      CUDALAB_CHECK(cudaMalloc(&p, bytes));
      leaked.push_back(p);
      throw std::invalid_argument("scratch: the argument check after the allocation");
    case kFreeLeaked:
      for (void* q : leaked) CUDALAB_CHECK(cudaFree(q));
      for (void* q : leaked_async) CUDALAB_CHECK(cudaFreeAsync(q, stream));
      leaked.clear();
      leaked_async.clear();
      return;
    default:
      throw std::invalid_argument("scratch: unknown how");
  }
}

}  // namespace cudalab::remote_checks

namespace cudalab::remote {
void register_exercise() { CUDALAB_REMOTE_remote_checks(CUDALAB_REMOTE_SERVE) }
}  // namespace cudalab::remote
