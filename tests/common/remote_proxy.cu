// The checker's proxies of one exercise's API: each function forwards its
// call to the runner (cudalab/test/remote.hpp). Compiled once per exercise
// with CUDALAB_REMOTE_LIST naming the exercise's list in the chapter's
// remote_api.cuh (tests/<chapter>/remote_api.cuh).
#include "cudalab/test/remote.hpp"
#include "remote_api.cuh"

CUDALAB_REMOTE_LIST(CUDALAB_REMOTE_PROXY)
