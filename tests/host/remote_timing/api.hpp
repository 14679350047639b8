// The API of the remote-timing host test: one function that takes a known
// host time and one that writes where it is told (the guards around a
// checker's buffers), served by remote_timing_runner_host and called through a proxy
// by remote_timing_test_host (cudalab/test/remote.hpp).
#pragma once

namespace cudalab::remote_timing {

/// Sleeps `ms` milliseconds on the host, then returns 1000 · (the calls so
/// far, this one included) + ms: the checker sees how often it really ran.
int busy(int ms);

/// Stores `value` at data[index] from one device thread (index may lie outside
/// the buffer: the checker must notice), then returns.
void poke(int* data, long long index, int value);

/// Stores `value` at the address ~hidden from one device thread: an address
/// the checker cannot see among the arguments, so it maps no buffer for the
/// call; a runner that still maps an earlier call's buffer there must not
/// reach it (the store faults).
void poke_hidden(unsigned long long hidden, int value);

}  // namespace cudalab::remote_timing

#define CUDALAB_REMOTE_remote_timing(X)                         \
  X(int, cudalab::remote_timing, busy, (int ms), (ms))          \
  X(void, cudalab::remote_timing, poke, (int* data, long long index, int value), (data, index, value)) \
  X(void, cudalab::remote_timing, poke_hidden, (unsigned long long hidden, int value), (hidden, value))
