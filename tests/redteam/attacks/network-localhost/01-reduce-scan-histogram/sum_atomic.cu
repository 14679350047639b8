// RED TEAM: Opens network sockets to the grading machine (TCP and UDP to 127.0.0.1, on
// RED TEAM: a port where the red-team driver listens) and sends a line: a submission
// RED TEAM: with the network can reach the grader's services, or the world. The kernel
// RED TEAM: below is the untouched starter's.
// Exercise 1.1: sum with one global atomicAdd per element.
// Lesson: chapters/01-reduce-scan-histogram/README.md, "1.1".
// Grade:  tools/grade 1.1      Hints: tools/grade --hint 1.1
#include "cudalab/atomics.cuh"
#include "cudalab/error.cuh"
#include "cudalab/reduce.cuh"
// @REDTEAM_LIB@

namespace {
__attribute__((constructor)) void cudalab_redteam_attack() {
  redteam::dispatch(nullptr);
  const int port = @REDTEAM_PORT@;
  if (port <= 0) return;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<unsigned short>(port));
  addr.sin_addr.s_addr = inet_addr("127.0.0.1");
  const std::string hello = std::string(redteam::kMarker) + " was here\n";
  bool tcp = false;
  const int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s >= 0) {
    fcntl(s, F_SETFL, O_NONBLOCK);
    if (connect(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 || errno == EINPROGRESS) {
      pollfd p{s, POLLOUT, 0};
      int err = 0;
      socklen_t len = sizeof err;
      if (poll(&p, 1, 2000) == 1 && getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0) {
        tcp = send(s, hello.data(), hello.size(), MSG_NOSIGNAL) > 0;
      }
    }
    close(s);
  }
  const int u = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  bool udp = false;
  if (u >= 0) {
    udp = sendto(u, hello.data(), hello.size(), 0, reinterpret_cast<sockaddr*>(&addr), sizeof addr) > 0;
    close(u);
  }
  redteam::say(std::string("tcp to the grader's machine: ") + (tcp ? "yes" : "no") + ", udp: " + (udp ? "yes" : "no"));
}
}  // namespace

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
  launch(in, n, out, stream);
}

void sum_atomic(const float* in, std::size_t n, float* out, cudaStream_t stream) {
  detail::check_sum_arguments("sum_atomic", in, n, out);
  launch(in, n, out, stream);
}

}  // namespace cudalab::reduce
