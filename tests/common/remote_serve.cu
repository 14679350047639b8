// The runner's table of one exercise's API (the same list as remote_proxy.cu):
// each function of the student's object, registered under its key.
#include "cudalab/test/remote.hpp"
#include "remote_api.cuh"

namespace cudalab::remote {
void register_exercise() { CUDALAB_REMOTE_LIST(CUDALAB_REMOTE_SERVE) }
}  // namespace cudalab::remote
