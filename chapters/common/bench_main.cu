// Benchmark main for every cudalab benchmark program: names the device, its
// SM count and memory in the benchmark context (so a JSON result says where it
// was measured), runs the registered benchmarks, then ends the exercise's
// runner (a benchmark program is a checker: cudalab/bench.cuh).
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>

#include "cudalab/device.cuh"

// Defined in a benchmark program that is a checker (tests/common/remote_checker.cu):
// ends the exercise's runner; 86 when compute-sanitizer reported errors in it.
extern "C" int cudalab_remote_finish() __attribute__((weak));

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
