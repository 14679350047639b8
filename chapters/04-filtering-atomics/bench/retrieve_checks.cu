// The Thrust check of the retrieve benchmarks (retrieve_bench.cuh), compiled
// once per program with the group's baselines instead of in every exercise's
// benchmark object, for the two output layouts the benchmarks use.
#include <thrust/count.h>
#include <thrust/execution_policy.h>
#include <thrust/functional.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/transform_reduce.h>

#include <cstddef>
#include <string>

#include "retrieve_bench.cuh"

namespace cudalab::bench::retrieve {
namespace {
// The hash of slot i when it is live, else 0.
struct LiveSlotHash {
  const cudalab::filter::Slot* slots;
  __host__ __device__ unsigned long long operator()(std::size_t i) const {
    const cudalab::filter::Slot s = slots[i];
    return cudalab::filter::is_live(s.key) ? detail::pair_hash(s.key, s.value) : 0ull;
  }
};

struct IsLiveSlot {
  __host__ __device__ bool operator()(const cudalab::filter::Slot& s) const { return cudalab::filter::is_live(s.key); }
};

// check_retrieved for either output layout (SplitPairs, SlotPairs).
template <class OutputHash>
std::string check_retrieved_as(std::size_t n, OutputHash out) {
  unsigned long long got = 0;
  CUDALAB_CHECK(cudaMemcpy(&got, count(), sizeof got, cudaMemcpyDeviceToHost));
  const cudalab::filter::Slot* slots = table(n).data();
  const auto want = static_cast<unsigned long long>(thrust::count_if(thrust::device, slots, slots + n, IsLiveSlot{}));
  if (got != want) return "count " + std::to_string(got) + ", expected " + std::to_string(want);
  const thrust::counting_iterator<std::size_t> first(0);
  const auto sum = [&](auto hash, std::size_t m) {
    return thrust::transform_reduce(thrust::device, first, first + m, hash, 0ull, thrust::plus<unsigned long long>());
  };
  if (sum(out, static_cast<std::size_t>(got)) != sum(LiveSlotHash{slots}, n)) {
    return "not the live pairs of the table";
  }
  return "";
}
}  // namespace

std::string check_retrieved(std::size_t n, SplitPairs out) { return check_retrieved_as(n, out); }

std::string check_retrieved(std::size_t n, SlotPairs out) { return check_retrieved_as(n, out); }

}  // namespace cudalab::bench::retrieve
