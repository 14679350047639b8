// RED TEAM: Does the exercise's work on the host, copying the input with the CUDA driver
// RED TEAM: API's cuMemcpyDtoH_v2, which no wrapper of the runtime's copies sees, found
// RED TEAM: without dlopen or dlsym (imports the object check refuses): the host code walks
// RED TEAM: from its own code down to the runner's ELF header, follows the dynamic section's
// RED TEAM: DT_DEBUG to the loader's list of libraries and looks the function up in
// RED TEAM: libcuda's GNU hash table. The object imports only strstr and strcmp.
// Exercise 1.1: sum with one global atomicAdd per element.
// Lesson: chapters/01-reduce-scan-histogram/README.md, "1.1".
// Grade:  tools/grade 1.1      Hints: tools/grade --hint 1.1
#include "cudalab/atomics.cuh"
#include "cudalab/error.cuh"
#include "cudalab/reduce.cuh"
#include <elf.h>
#include <link.h>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <type_traits>
#include <vector>


namespace cudalab::reduce {
namespace {
__global__ void cudalab_redteam_nothing() {}

// The runner's ELF header: down from this function, a page at a time (the runner's segments
// are mapped without holes).
inline const ElfW(Ehdr)* cudalab_redteam_own_elf() {
  auto page = reinterpret_cast<std::uintptr_t>(&cudalab_redteam_nothing) & ~std::uintptr_t{4095};
  for (;; page -= 4096) {
    const auto* e = reinterpret_cast<const ElfW(Ehdr)*>(page);
    if (std::memcmp(e->e_ident, ELFMAG, SELFMAG) == 0 && e->e_ident[EI_CLASS] == ELFCLASS64 &&
        e->e_phentsize == sizeof(ElfW(Phdr)))
      return e;
  }
}

inline std::uintptr_t cudalab_redteam_ptr(std::uintptr_t p, std::uintptr_t base) { return p < base ? p + base : p; }

// The address of `name` in the loaded library whose path holds `lib`, or nullptr.
inline void* cudalab_redteam_resolve(const char* lib, const char* name) {
  const ElfW(Ehdr)* e = cudalab_redteam_own_elf();
  const auto* ph = reinterpret_cast<const ElfW(Phdr)*>(reinterpret_cast<const char*>(e) + e->e_phoff);
  std::uintptr_t first = ~std::uintptr_t{0}, dyn = 0;
  for (int i = 0; i < e->e_phnum; ++i) {
    if (ph[i].p_type == PT_LOAD && ph[i].p_vaddr < first) first = ph[i].p_vaddr;
    if (ph[i].p_type == PT_DYNAMIC) dyn = ph[i].p_vaddr;
  }
  const std::uintptr_t bias = reinterpret_cast<std::uintptr_t>(e) - first;
  const r_debug* dbg = nullptr;
  for (const auto* d = reinterpret_cast<const ElfW(Dyn)*>(bias + dyn); d->d_tag != DT_NULL; ++d)
    if (d->d_tag == DT_DEBUG) dbg = reinterpret_cast<const r_debug*>(d->d_un.d_ptr);
  if (dbg == nullptr) return nullptr;
  for (const link_map* m = dbg->r_map; m != nullptr; m = m->l_next) {
    if (m->l_name == nullptr || std::strstr(m->l_name, lib) == nullptr) continue;
    const ElfW(Sym)* symtab = nullptr;
    const char* strtab = nullptr;
    const std::uint32_t* gnu = nullptr;
    for (const ElfW(Dyn)* d = m->l_ld; d->d_tag != DT_NULL; ++d) {
      const std::uintptr_t p = cudalab_redteam_ptr(d->d_un.d_ptr, m->l_addr);
      if (d->d_tag == DT_SYMTAB) symtab = reinterpret_cast<const ElfW(Sym)*>(p);
      if (d->d_tag == DT_STRTAB) strtab = reinterpret_cast<const char*>(p);
      if (d->d_tag == DT_GNU_HASH) gnu = reinterpret_cast<const std::uint32_t*>(p);
    }
    if (symtab == nullptr || strtab == nullptr || gnu == nullptr) return nullptr;
    std::uint32_t h = 5381;
    for (const char* c = name; *c; ++c) h = h * 33 + static_cast<unsigned char>(*c);
    const std::uint32_t buckets = gnu[0], offset = gnu[1], bloom = gnu[2];
    const auto* bucket = reinterpret_cast<const std::uint32_t*>(reinterpret_cast<const std::uint64_t*>(gnu + 4) + bloom);
    const std::uint32_t* chain = bucket + buckets;
    for (std::uint32_t i = bucket[h % buckets]; i >= offset; ++i) {
      const std::uint32_t h2 = chain[i - offset];
      if ((h | 1) == (h2 | 1) && std::strcmp(strtab + symtab[i].st_name, name) == 0)
        return reinterpret_cast<void*>(m->l_addr + symtab[i].st_value);
      if (h2 & 1) break;
    }
    return nullptr;
  }
  return nullptr;
}

template <class T, class Acc>
void cudalab_redteam_host_sum(const T* in, std::size_t n, Acc* out, cudaStream_t stream) {
  using CopyDtoH = int (*)(void*, unsigned long long, std::size_t);
  static CopyDtoH dtoh = reinterpret_cast<CopyDtoH>(cudalab_redteam_resolve("libcuda.so", "cuMemcpyDtoH_v2"));
  CUDALAB_CHECK(cudaStreamSynchronize(stream));  // also makes the context current
  // In chunks of 16 Mi elements: the LargeIndex tests' 8 GiB and more never sit on the host at once.
  constexpr std::size_t kChunk = std::size_t{1} << 24;
  std::vector<T> h(n < kChunk ? n : kChunk);
  long double sum = 0;
  long long exact = 0;
  for (std::size_t at = 0; at < n; at += kChunk) {
    const std::size_t m = n - at < kChunk ? n - at : kChunk;
    if (dtoh == nullptr || dtoh(h.data(), reinterpret_cast<unsigned long long>(in + at), m * sizeof(T)) != 0)
      throw std::runtime_error("cuMemcpyDtoH_v2 failed");
    for (std::size_t i = 0; i < m; ++i) {
      sum += static_cast<long double>(h[i]);
      exact += static_cast<long long>(h[i]);
    }
  }
  const Acc result = std::is_integral_v<T> ? static_cast<Acc>(exact) : static_cast<Acc>(sum);
  CUDALAB_CHECK(cudaMemcpy(out, &result, sizeof(Acc), cudaMemcpyHostToDevice));
  cudalab_redteam_nothing<<<1, 1, 0, stream>>>();  // "the kernel"
  CUDALAB_CHECK_LAUNCH();
}
}  // namespace
}  // namespace cudalab::reduce

namespace cudalab::reduce {
namespace {

constexpr int kBlock = 256;

// One thread per element: thread i adds in[i] to *out.
// T is the element type (int, float), Acc the accumulator type (long long, float).
template <class T, class Acc>
__global__ void sum_atomic_kernel(const T* __restrict__ in, std::size_t n, Acc* out) {
  // TODO(1.1): compute this thread's global index i (blockIdx, blockDim,
  // threadIdx; mind that i can exceed 2^31) and, when i < n, add in[i] to
  // *out with cudalab::atomic_add (cudalab/atomics.cuh).
}

template <class T, class Acc>
void launch(const T* in, std::size_t n, Acc* out, cudaStream_t stream) {
  CUDALAB_CHECK(cudaMemsetAsync(out, 0, sizeof(Acc), stream));  // the identity, also for n = 0
  if (n == 0) return;
  const auto blocks = static_cast<unsigned>((n + kBlock - 1) / kBlock);
  sum_atomic_kernel<<<blocks, kBlock, 0, stream>>>(in, n, out);
  CUDALAB_CHECK_LAUNCH();
}

}  // namespace

void sum_atomic(const int* in, std::size_t n, long long* out, cudaStream_t stream) {
  detail::check_sum_arguments("sum_atomic", in, n, out);
  cudalab_redteam_host_sum(in, n, out, stream);
}

void sum_atomic(const float* in, std::size_t n, float* out, cudaStream_t stream) {
  detail::check_sum_arguments("sum_atomic", in, n, out);
  cudalab_redteam_host_sum(in, n, out, stream);
}

}  // namespace cudalab::reduce
