// The runner of the remote-timing host test: the function of api.hpp and its
// registration (what remote_serve.cu and a student's object are for an exercise).
#include <chrono>
#include <thread>

#include "api.hpp"
#include "cudalab/test/remote.hpp"

namespace cudalab::remote_timing {
int busy(int ms) {
  static int calls = 0;
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  return 1000 * ++calls + ms;
}
}  // namespace cudalab::remote_timing

namespace cudalab::remote {
void register_exercise() { CUDALAB_REMOTE_remote_timing(CUDALAB_REMOTE_SERVE) }
}  // namespace cudalab::remote
