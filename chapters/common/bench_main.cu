// Benchmark main for every cudalab benchmark program: names the device, its
// SM count and memory in the benchmark context (so a JSON result says where it
// was measured), measures the device-to-device copy bandwidth once (the
// grader refuses a speed that beats it: tools/cudalab_grade/bench.py,
// implausible), runs the registered benchmarks, then ends the exercise's
// runner (a benchmark program is a checker: cudalab/bench.cuh).
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "cudalab/device.cuh"

// Defined in a benchmark program that is a checker (tests/common/remote_checker.cu):
// ends the exercise's runner; 86 when compute-sanitizer reported errors in it.
extern "C" int cudalab_remote_finish() __attribute__((weak));

namespace {

// The device-to-device copy bandwidth in GB/s, counting bytes read plus bytes
// written (as copy_bandwidth/<type>/<n> does): the best of five cudaMemcpyAsync
// of min(256 MiB, memory / 8) after a warm-up, timed with CUDA events. 0 when
// any CUDA call fails (the context then has no copy_bandwidth_gbps, and the
// grader's bandwidth rule does not judge).
double copy_bandwidth_gbps(std::size_t total_memory) {
  const std::size_t bytes = std::min<std::size_t>(std::size_t{256} << 20, total_memory / 8);
  void* src = nullptr;
  void* dst = nullptr;
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  double best = 0.0;
  bool ok = bytes > 0 && cudaMalloc(&src, bytes) == cudaSuccess && cudaMalloc(&dst, bytes) == cudaSuccess &&
            cudaEventCreate(&start) == cudaSuccess && cudaEventCreate(&stop) == cudaSuccess &&
            cudaMemset(src, 0x5a, bytes) == cudaSuccess &&
            cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice) == cudaSuccess;
  for (int run = 0; ok && run < 5; ++run) {
    float ms = 0.0f;
    ok = cudaEventRecord(start, nullptr) == cudaSuccess &&
         cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, nullptr) == cudaSuccess &&
         cudaEventRecord(stop, nullptr) == cudaSuccess && cudaEventSynchronize(stop) == cudaSuccess &&
         cudaEventElapsedTime(&ms, start, stop) == cudaSuccess;
    if (ok && ms > 0.0f) best = std::max(best, 2.0 * static_cast<double>(bytes) / (ms * 1e-3) / 1e9);
  }
  if (start != nullptr) cudaEventDestroy(start);
  if (stop != nullptr) cudaEventDestroy(stop);
  if (src != nullptr) cudaFree(src);
  if (dst != nullptr) cudaFree(dst);
  cudaGetLastError();  // a failure here must not be reported by the first benchmark's check
  return ok ? best : 0.0;
}

// The DRAM's theoretical peak in GB/s: 2 transfers per memory clock (the
// attribute is in kHz) times the bus width in bytes; 0 when unknown.
double dram_peak_gbps() {
  int device = 0;
  int khz = 0;
  int bits = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&bits, cudaDevAttrGlobalMemoryBusWidth, device) != cudaSuccess) {
    cudaGetLastError();
    return 0.0;
  }
  return 2.0 * static_cast<double>(khz) * 1e3 * (static_cast<double>(bits) / 8.0) / 1e9;
}

std::string gbps_text(double gbps) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", gbps);
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  if (cudalab::device_count() > 0) {
    const cudaDeviceProp prop = cudalab::current_device_properties();
    const cudalab::DeviceLimits real = cudalab::real_device_limits();
    int runtime = 0;
    int driver = 0;
    cudaRuntimeGetVersion(&runtime);
    cudaDriverGetVersion(&driver);
    benchmark::AddCustomContext("device", prop.name);
    benchmark::AddCustomContext("compute_capability",
                                std::to_string(real.cc_major) + "." + std::to_string(real.cc_minor));
    benchmark::AddCustomContext("sm_count", std::to_string(real.sm_count));
    benchmark::AddCustomContext("l2_bytes", std::to_string(real.l2_bytes));
    benchmark::AddCustomContext("global_memory_bytes", std::to_string(real.global_bytes));
    const std::string profile = cudalab::device_profile_env();
    if (!profile.empty()) {
      // The launches were sized for this GPU (cudalab/device.cuh); the figures above are the real device's.
      benchmark::AddCustomContext("device_profile", cudalab::device_limits().profile);
    }
    benchmark::AddCustomContext("cuda_runtime", std::to_string(runtime));
    benchmark::AddCustomContext("cuda_driver", std::to_string(driver));
    if (const double peak = dram_peak_gbps(); peak > 0.0) {
      benchmark::AddCustomContext("dram_peak_gbps", gbps_text(peak));
    }
    if (const double copy = copy_bandwidth_gbps(prop.totalGlobalMem); copy > 0.0) {
      benchmark::AddCustomContext("copy_bandwidth_gbps", gbps_text(copy));
    }
  } else {
    benchmark::AddCustomContext("device", "none");
  }
  if (const char* commit = std::getenv("CUDALAB_COMMIT")) {
    benchmark::AddCustomContext("commit", commit);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return cudalab_remote_finish != nullptr ? cudalab_remote_finish() : 0;
}
