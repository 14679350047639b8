/// @file bench.cuh
/// @brief Benchmark helpers: CUDA-event timing for Google Benchmark, an L2
///        flush between iterations, device-side input generation and the
///        device copy bandwidth that every chapter reports beside its results.
///
/// Conventions: every benchmark uses manual time, sets bytes and items
/// processed, and runs in the same program as its baseline so that results
/// are reported as ratios.
///
/// An exercise's benchmark program is a checker (cudalab/test/remote.hpp):
/// it links a proxy of the exercise's API, and the student's code runs in the
/// exercise's runner process, where it cannot reach the benchmark's clock,
/// its output or its verdict. A call into the runner is timed by the checker:
/// wall clock around the call, less a null call (the same way there and
/// back, mappings, one empty kernel and synchronization, without the
/// exercise's work) made just before it with the same arguments. The
/// baselines run in the checker itself and, in a checker, are timed the same
/// way: wall clock around the launch and its synchronization, less an empty
/// kernel launched and synchronized just before; so a ratio compares two
/// times that hold the same launch and synchronization costs, on both sides
/// after the GPU has switched to the context that runs the work (an untimed
/// empty launch pays that switch first). A program that is not a checker
/// times with CUDA events. A benchmark given `Fresh` hooks
/// writes new inputs before every timed call (untimed), so no answer of an
/// earlier call can be reused, and verifies the last call's output and, at
/// random, others (kVerifyProbability, untimed): code that skips its work on
/// some calls, hoping the checked one is not among them, fails too.
#pragma once

#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <utility>

#include "cudalab/device.cuh"
#include "cudalab/device_buffer.cuh"
#include "cudalab/error.cuh"
#include "cudalab/generators.hpp"
#include "cudalab/timer.cuh"

/// Defined in a benchmark program that is a checker (tests/common/remote_checker.cu):
/// the remote calls since the last call, their seconds and those of the null
/// calls before them; the first call turns the null calls on. Null elsewhere.
extern "C" int cudalab_remote_call_times(double* call_seconds, double* null_seconds) __attribute__((weak));

namespace cudalab::bench {

namespace detail {
/// The empty kernel a checker launches before a timed baseline call (time_runs):
/// its launch and synchronization are subtracted, as the runner's null call's are.
template <int>
__global__ void null_kernel() {}
}  // namespace detail

/// @brief Marks the benchmark skipped when there is no CUDA device.
/// @return true when the benchmark may run.
inline bool require_device(benchmark::State& state) {
  if (device_count() > 0) return true;
  state.SkipWithError("no CUDA device");
  return false;
}

/// @brief Registers the benchmark `name` the way every benchmark that runs
///        on the GPU is registered: `body(state)` runs only when there is a
///        CUDA device (require_device, else the benchmark is skipped), and
///        the time is manual (time_runs reports each iteration's), shown in
///        microseconds.
/// @tparam Body callable as `body(benchmark::State&)`, copied into the benchmark
/// @param name the benchmark's name before its arguments ("sum_atomic/int32")
/// @param body the benchmark's work, with time_runs
/// @return the benchmark, for its arguments (`->Arg(n)`, `->Args({...})`) and
///         any other setting (a unit other than microseconds).
template <class Body>
auto* register_device_benchmark(const std::string& name, Body body) {
  return benchmark::RegisterBenchmark(name.c_str(),
                                      [body](benchmark::State& state) {
                                        if (require_device(state)) body(state);
                                      })
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond);
}

/// @brief Temporary storage for CUB's device-wide calls (the second call of the
///        two-call protocol), one buffer per program, grown as needed and kept.
/// @param bytes the size CUB asked for in its first call.
/// @return device memory of at least `bytes` bytes, valid until a larger request.
/// @note A larger request frees the old buffer with cudaFree, which waits for the
///       device, so work still using it finishes first. Complexity: O(1), one
///       allocation per new maximum.
inline void* temp_storage(std::size_t bytes) {
  static DeviceBuffer<unsigned char> temp;
  if (temp.size() < bytes) temp = DeviceBuffer<unsigned char>(bytes);
  return temp.data();
}

/// @brief Evicts the L2 cache by writing a buffer twice its size, so that an
///        iteration never reads input left in L2 by the one before it.
class L2Flusher {
 public:
  /// Sized from the real L2 (cudalab::real_device_limits(), never a
  /// profile's smaller one): under `CUDALAB_DEVICE_PROFILE` the hardware's
  /// whole cache must still be flushed.
  L2Flusher() { buffer_ = DeviceBuffer<unsigned char>(2 * real_device_limits().l2_bytes); }
  /// Enqueues the flush on `stream` (outside any timed region).
  void flush(cudaStream_t stream) { buffer_.fill_bytes(0x5a, stream); }

 private:
  DeviceBuffer<unsigned char> buffer_;
};

/// @brief What a benchmark does around its timed calls so that no call can
///        reuse the answer of an earlier one (a cache keyed by the input's
///        address, size or a few sampled elements).
struct Fresh {
  /// Enqueues new inputs on the stream it is given, before every timed call
  /// (and the warm-up), outside the timed region. Empty: inputs never change.
  std::function<void(cudaStream_t)> refresh;
  /// After the last call, and after calls drawn at random (time_runs()):
  /// "" when the output of the call just made is right for the inputs it
  /// was given, else what is wrong (the run is then marked wrong with that
  /// message, report_wrong_output(), and the grader gives no speed points).
  /// It must judge any call, not only the last, and change nothing the next
  /// call reads. Empty: not verified.
  std::function<std::string()> verify;
};

/// @brief The user counter that marks a repetition whose output was wrong
///        (1; absent otherwise), with the message in the run's label.
///
/// A wrong output is not reported with State::SkipWithError: a call checked
/// at random can be wrong in one repetition and not in the next, and Google
/// Benchmark up to 1.8 crashes computing the statistics of repetitions of
/// which some were skipped and some not (google/benchmark issues 1406 and
/// 2206: a null dereference or a check on the iteration count). A marked
/// repetition runs its remaining iterations without any work, each counted
/// as one second (time_runs), so that it ends at once: a code whose calls do
/// nothing would otherwise need millions of iterations, each with its untimed
/// new inputs, to reach the minimum time, and the benchmark would run past
/// its time limit instead of saying that the output is wrong. Every reader of
/// the results (cudalab_grade.bench.results_from) takes a benchmark with a
/// marked repetition as failed, with the label's message.
inline constexpr const char* kWrongOutputCounter = "wrong_output";

/// @brief Marks the current repetition's output wrong (kWrongOutputCounter
///        set to 1, `why` as its label). Work O(1).
inline void report_wrong_output(benchmark::State& state, const std::string& why) {
  state.counters[kWrongOutputCounter] = 1;
  state.SetLabel(why);
}

/// @brief The chance that time_runs() also verifies a timed call other than
///        the last: drawn from the benchmark process's own random device (a
///        runner cannot know which calls are checked). A code that skips its
///        work on a share f of k calls goes unseen with probability about
///        (1 - f / 8)^k, and a run of a 300 us call has over 300 calls.
inline constexpr double kVerifyProbability = 1.0 / 8;
/// @brief The most time the random verifications may take, as a share of the
///        timed time so far (one is always allowed), so that a verification
///        much slower than the call cannot stretch a benchmark.
inline constexpr double kVerifyShare = 0.25;

/// @brief Runs `launch(stream)` once per benchmark iteration after an L2
///        flush, timed as the file comment says (in a checker: wall clock less
///        a null call, the runner's for a remote call, an empty launch of this
///        process for a baseline; elsewhere: CUDA events), and reports bytes/s
///        and items/s.
/// @param state         the Google Benchmark state of the running benchmark
/// @param launch        enqueues the work on the stream it is given
/// @param bytes_per_run the fewest bytes one run must move through device
///                      memory (each input read once, each output written once)
/// @param items_per_run elements processed by one run
/// @param fresh         new inputs before each call; the check of the last
///                      call's output and of calls drawn at random
///                      (kVerifyProbability, within kVerifyShare of the time);
///                      a wrong one marks the repetition (report_wrong_output())
template <class Launch>
void time_runs(benchmark::State& state, Launch&& launch, std::size_t bytes_per_run,
               std::size_t items_per_run, const Fresh& fresh = {}) {
  static L2Flusher flusher;
  cudaStream_t stream = nullptr;
  EventTimer timer;
  auto* const remote_times = &cudalab_remote_call_times;  // null unless this program is a checker
  if (remote_times != nullptr) remote_times(nullptr, nullptr);  // null calls on, counts cleared
  if (fresh.refresh) fresh.refresh(stream);
  launch(stream);  // warm-up: module load, first-touch of the pages
  CUDALAB_CHECK(cudaStreamSynchronize(stream));
  // A call into the runner times itself (remote_checker.cu); the warm-up says whether this is one.
  const bool remote = remote_times != nullptr && remote_times(nullptr, nullptr) > 0;
  using Clock = std::chrono::steady_clock;
  const auto empty_launch = [stream] {
    detail::null_kernel<0><<<1, 1, 0, stream>>>();
    CUDALAB_CHECK(cudaGetLastError());
    CUDALAB_CHECK(cudaStreamSynchronize(stream));
  };
  std::mt19937_64 pick{std::random_device{}()};
  std::bernoulli_distribution sampled(kVerifyProbability);
  double timed = 0, verifying = 0;
  std::string wrong;
  for (auto _ : state) {
    if (!wrong.empty()) {  // a marked repetition: no more work, its time means nothing
      state.SetIterationTime(1.0);
      continue;
    }
    if (fresh.refresh) fresh.refresh(stream);
    flusher.flush(stream);
    double seconds = 0;
    if (remote) {
      launch(stream);
      double call = 0, null = 0;
      remote_times(&call, &null);
      seconds = std::max(call - null, 1e-7);  // never zero: a ratio divides by it
    } else if (remote_times != nullptr) {
      // A checker's own work (a baseline): wall clock, as the runner's calls are timed.
      empty_launch();  // untimed: waits for the flush and pays any switch to this context
      const auto t0 = Clock::now();
      empty_launch();
      const auto t1 = Clock::now();
      launch(stream);
      CUDALAB_CHECK(cudaStreamSynchronize(stream));
      const auto t2 = Clock::now();
      seconds = std::max(std::chrono::duration<double>((t2 - t1) - (t1 - t0)).count(), 1e-7);
    } else {
      timer.start(stream);
      launch(stream);
      timer.stop(stream);
      seconds = static_cast<double>(timer.elapsed_ms()) / 1e3;
    }
    state.SetIterationTime(seconds);
    timed += seconds;
    // Untimed. After a wrong output the iterations left do nothing (the top of the loop):
    // leaving the loop early needs SkipWithError (report_wrong_output() says why not).
    if (wrong.empty() && fresh.verify && sampled(pick) && verifying <= kVerifyShare * timed) {
      const auto v0 = Clock::now();
      CUDALAB_CHECK(cudaDeviceSynchronize());
      const std::string why = fresh.verify();
      verifying += std::chrono::duration<double>(Clock::now() - v0).count();
      if (!why.empty()) wrong = "a call's output is wrong (a call checked at random): " + why;
    }
  }
  CUDALAB_CHECK(cudaDeviceSynchronize());
  if (wrong.empty() && fresh.verify) {
    const std::string why = fresh.verify();
    if (!why.empty()) wrong = "the last call's output is wrong: " + why;
  }
  if (!wrong.empty()) {
    report_wrong_output(state, wrong);
    return;
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(bytes_per_run));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(items_per_run));
  state.counters["n"] = static_cast<double>(items_per_run);
}

/// @brief The SplitMix64 finalizer (Steele, Lea and Flood, "Fast splittable
///        pseudorandom number generators", OOPSLA 2014): 64 well-mixed bits
///        of `x`, on the host and the device. Every generator and fingerprint
///        of the benchmarks is built on it. Work O(1).
__host__ __device__ inline std::uint64_t mix64(std::uint64_t x) {
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

namespace detail {
template <class T>
__global__ void fill_uniform_int_kernel(T* out, std::size_t n, std::uint64_t seed, T lo, T hi) {
  const std::uint64_t span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo) + 1;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::uint64_t x = mix64(seed ^ (i * 0x9E3779B97F4A7C15ull));
    out[i] = static_cast<T>(lo + static_cast<T>(__umul64hi(x, span)));
  }
}
}  // namespace detail

/// @brief A device array of n integers uniform in [lo, hi], generated on the
///        device and cached per (n, seed) for the life of the program, so
///        that benchmarks at 2^28 elements do not spend seconds on inputs.
template <class T>
const DeviceBuffer<T>& cached_uniform_ints(std::size_t n, std::uint64_t seed, T lo, T hi) {
  static std::map<std::pair<std::size_t, std::uint64_t>, DeviceBuffer<T>> cache;
  auto it = cache.find({n, seed});
  if (it == cache.end()) {
    DeviceBuffer<T> buf(n);
    if (n > 0) {
      detail::fill_uniform_int_kernel<<<4 * sm_count(), 256>>>(buf.data(), n, seed, lo, hi);
      CUDALAB_CHECK_LAUNCH();
      CUDALAB_CHECK(cudaDeviceSynchronize());
    }
    it = cache.emplace(std::make_pair(n, seed), std::move(buf)).first;
  }
  return it->second;
}

/// @brief A seed no runner can guess: random per program, new per call.
inline std::uint64_t next_seed() {
  static std::uint64_t state = (static_cast<std::uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}();
  state = state * 6364136223846793005ull + 1442695040888963407ull;
  return state ^ (state >> 29);
}

/// @brief A device array of n integers for `Fresh` inputs, one per (n, tag)
///        for the life of the program; `refill_uniform_ints` gives it values.
template <class T>
DeviceBuffer<T>& fresh_buffer(std::size_t n, int tag = 0) {
  static std::map<std::pair<std::size_t, int>, DeviceBuffer<T>> buffers;
  return buffers.try_emplace({n, tag}, n).first->second;
}

/// @brief Enqueues new values uniform in [lo, hi] for every element of `buf`,
///        from a new seed (next_seed()). Work O(n), on the device.
template <class T>
void refill_uniform_ints(DeviceBuffer<T>& buf, T lo, T hi, cudaStream_t stream) {
  if (buf.size() == 0) return;
  detail::fill_uniform_int_kernel<<<4 * sm_count(), 256, 0, stream>>>(buf.data(), buf.size(), next_seed(), lo,
                                                                        hi);
  CUDALAB_CHECK_LAUNCH();
}

/// @brief Registers "copy_bandwidth/<type>/<n>": a device-to-device
///        cudaMemcpyAsync of n elements of T, counting bytes read plus bytes
///        written. It is the practical ceiling of any memory-bound kernel on
///        this device, measured in the same run as the kernels it judges.
template <class T>
void register_copy_bandwidth(const std::string& type_name, std::initializer_list<std::int64_t> sizes) {
  auto* b = register_device_benchmark("copy_bandwidth/" + type_name, [](benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    const DeviceBuffer<T>& src = cached_uniform_ints<T>(n, 1, T{0}, T{100});
    static std::map<std::size_t, DeviceBuffer<T>> destinations;
    DeviceBuffer<T>& dst = destinations.try_emplace(n, n).first->second;
    time_runs(
        state,
        [&](cudaStream_t s) {
          CUDALAB_CHECK(cudaMemcpyAsync(dst.data(), src.data(), n * sizeof(T), cudaMemcpyDeviceToDevice, s));
        },
        2 * n * sizeof(T), n);
  });
  for (auto n : sizes) b->Arg(n);
}

}  // namespace cudalab::bench
