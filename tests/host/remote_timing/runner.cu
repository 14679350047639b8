// The runner of the remote-timing host test: the function of api.hpp and its
// registration (what remote_serve.cu and a student's object are for an exercise).
#include <chrono>
#include <thread>

#include "api.hpp"
#include "cudalab/error.cuh"
#include "cudalab/test/remote.hpp"

namespace cudalab::remote_timing {
int busy(int ms) {
  static int calls = 0;
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  return 1000 * ++calls + ms;
}

namespace {
__global__ void poke_kernel(int* data, long long index, int value) { data[index] = value; }
}  // namespace

void poke(int* data, long long index, int value) {
  poke_kernel<<<1, 1>>>(data, index, value);
  CUDALAB_CHECK_LAUNCH();
}

void poke_hidden(unsigned long long hidden, int value) {
  poke_kernel<<<1, 1>>>(reinterpret_cast<int*>(~hidden), 0, value);
  CUDALAB_CHECK_LAUNCH();
}
}  // namespace cudalab::remote_timing

namespace cudalab::remote {
void register_exercise() { CUDALAB_REMOTE_remote_timing(CUDALAB_REMOTE_SERVE) }
}  // namespace cudalab::remote
