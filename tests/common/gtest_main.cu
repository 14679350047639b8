// The gtest main of every cudalab test program, and the harness behind
// cudalab/test/harness.hpp.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <string>

#include "cudalab/device.cuh"
#include "cudalab/test/harness.hpp"

// Defined by cudalab::remote_checker (remote_checker.cu) in the test programs
// that call an exercise's code in its runner, absent from host-only test
// programs. cudalab_remote_finish ends the runner and returns its verdict on
// the runner (86: compute-sanitizer, run as the runner's prefix, found errors);
// cudalab_remote_held says what device memory the exercise's code still holds
// (0: no runner answered).
extern "C" int cudalab_remote_finish() __attribute__((weak));
extern "C" int cudalab_remote_held(unsigned long long* allocations, unsigned long long* bytes)
    __attribute__((weak));

namespace cudalab::test {
namespace {

std::string g_program = "test";
int g_device_count = -1;

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return (v != nullptr && *v != '\0') ? v : nullptr;
}

std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

std::string current_test_name() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  if (info == nullptr) return "";
  return std::string(info->test_suite_name()) + "." + info->name();
}

// Probes the device once, before any test runs, and prints what it found.
class GpuEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    const std::string profile = cudalab::device_profile_env();
    if (!profile.empty()) {
      try {
        (void)cudalab::device_profile(profile);
      } catch (const cudalab::DeviceProfileError& e) {
        std::fprintf(stderr, "cudalab: %s\n", e.what());
        std::exit(2);
      }
    }
    g_device_count = cudalab::device_count();
    if (g_device_count > 0) {
      const cudaDeviceProp prop = cudalab::current_device_properties();
      const cudalab::DeviceLimits real = cudalab::real_device_limits();
      std::printf("cudalab: device 0 of %d: %s (sm_%d%d, %d SMs)\n", g_device_count, prop.name, real.cc_major,
                  real.cc_minor, real.sm_count);
      if (!profile.empty()) {
        const cudalab::DeviceLimits l = cudalab::device_limits();
        std::printf("cudalab: CUDALAB_DEVICE_PROFILE=%s: %d SMs, %zu bytes of shared memory per block (opt-in), "
                    "%zu per SM, %d threads and %d blocks per SM, %zu bytes of L2\n",
                    l.profile, l.sm_count, l.shared_per_block_optin, l.shared_per_sm, l.max_threads_per_sm,
                    l.max_blocks_per_sm, l.l2_bytes);
      }
    } else {
      std::printf("cudalab: no CUDA device; GPU tests %s\n",
                  gpu_required() ? "FAIL (CUDALAB_REQUIRE_GPU=1)" : "are skipped");
    }
  }
  // After the last test: the exercise's code may keep a few device allocations
  // between calls, not one more for every call (held_memory_failure).
  void TearDown() override {
    unsigned long long allocations = 0, bytes = 0;
    if (cudalab_remote_held == nullptr || cudalab_remote_held(&allocations, &bytes) == 0) return;
    const std::string failure = held_memory_failure(allocations, bytes);
    if (!failure.empty()) ADD_FAILURE() << failure;
  }
};

}  // namespace

std::string held_memory_failure(unsigned long long allocations, unsigned long long bytes) {
  if (allocations <= kMaxHeldAllocations) return "";
  char mib[32];
  std::snprintf(mib, sizeof mib, "%.1f", static_cast<double>(bytes) / (1 << 20));
  return "the exercise's code still holds " + std::to_string(allocations) + " device allocations (" + mib +
         " MiB) after the tests, more than the " + std::to_string(kMaxHeldAllocations) +
         " a cache kept between calls needs: free in every path what each call allocates "
         "(cudaFree/cudaFreeAsync), including the paths that throw";
}

bool gpu_required() {
  const char* v = env("CUDALAB_REQUIRE_GPU");
  return v != nullptr && std::string(v) != "0";
}

bool gpu_available() {
  if (g_device_count < 0) g_device_count = cudalab::device_count();
  return g_device_count > 0;
}

std::uint64_t seed() {
  if (const char* v = env("CUDALAB_SEED")) return std::strtoull(v, nullptr, 0);
  return fnv1a(current_test_name()) % 1000000007ull;  // short enough to type
}

std::size_t max_n() {
  if (const char* v = env("CUDALAB_MAX_N")) return static_cast<std::size_t>(std::strtoull(v, nullptr, 0));
  return std::numeric_limits<std::size_t>::max();
}

std::string rerun_command(std::uint64_t seed_value) {
  std::ostringstream out;
  out << "CUDALAB_SEED=" << seed_value << " " << g_program << " --gtest_filter='"
      << current_test_name() << "'";
  return out.str();
}

std::string context(const std::string& exercise, std::size_t n, std::uint64_t seed_value) {
  std::ostringstream out;
  out << "[" << exercise << "] n = " << n << ", seed = " << seed_value
      << "\n  rerun: " << rerun_command(seed_value) << "\n  ";
  return out.str();
}

void GpuTest::SetUp() {
  if (gpu_available()) return;
  if (gpu_required()) {
    FAIL() << "no CUDA device, and CUDALAB_REQUIRE_GPU=1 forbids skipping";
  }
  GTEST_SKIP() << "no CUDA device";
}

void GpuTest::TearDown() {
  if (!gpu_available()) return;
  // A fault inside a kernel (illegal address, trap) is reported at the next
  // synchronizing call; make it this test's failure, not the next test's.
  const cudaError_t err = cudaDeviceSynchronize();
  EXPECT_EQ(err, cudaSuccess) << "asynchronous CUDA error after the test: " << cudaGetErrorName(err)
                              << " (" << cudaGetErrorString(err) << ")";
}

}  // namespace cudalab::test


int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (argc > 0) cudalab::test::g_program = argv[0];
  ::testing::AddGlobalTestEnvironment(new cudalab::test::GpuEnvironment);
  const int rc = RUN_ALL_TESTS();
  const int runner = cudalab_remote_finish != nullptr ? cudalab_remote_finish() : 0;
  return rc != 0 ? rc : runner;
}
