/// @file tile_status.cuh
/// @brief The tile status word of a single-pass scan with decoupled
///        look-back: a tile's status and its 32-bit value in one 64-bit
///        word, published and read with one relaxed device-scope atomic.
///
/// Exercises 1.8 (the scan), 1.9 (the segmented scan) and 4.6 (the stable
/// filter) give every tile of their input one such word, in an array that
/// starts as all zeros (kInvalid). A tile publishes its aggregate as soon as
/// it has reduced itself, then its inclusive prefix once it has looked back;
/// a word only ever moves from kInvalid to kAggregate to kPrefix.
///
/// Status and value share one word, so a reader that sees a status sees the
/// value written with it (single-copy atomicity of the 64-bit access), and
/// relaxed order suffices where the word is all one block hands to another.
/// Bits 2 to 31 are free for the exercise: 1.9 keeps its segment flag in
/// bit 2.
///
/// Source: Merrill and Garland, "Single-pass Parallel Prefix Scan with
/// Decoupled Look-back", Technical Report NVR-2016-002, NVIDIA, 2016; CUB's
/// `ScanTileState`, which packs status and value the same way.
#pragma once

#include <cuda/atomic>

#include <cuda_runtime.h>

/// @brief The decoupled look-back of a single-pass scan: the tile status
///        word (tile_status.cuh) and, given to later exercises, exercise
///        1.8's look-back (decoupled_lookback.cuh).
namespace cudalab::lookback {

/// @brief A tile's status word: the value in bits 32 to 63, the status in
///        bits 0 and 1.
using Word = unsigned long long;

/// @brief Status: nothing published yet (the array's initial zeros).
inline constexpr unsigned kInvalid = 0;
/// @brief Status: the value is the tile's own aggregate (its reduction).
inline constexpr unsigned kAggregate = 1;
/// @brief Status: the value is the tile's inclusive prefix (the reduction of
///        it and of every tile before it).
inline constexpr unsigned kPrefix = 2;

/// @brief A status word as a device-scope atomic: `StatusRef(status[t]).store(w,
///        cuda::memory_order_relaxed)` publishes, `.load(cuda::memory_order_relaxed)`
///        reads it from L2 (`ld.relaxed.gpu`), never from a stale L1 line.
using StatusRef = cuda::atomic_ref<Word, cuda::thread_scope_device>;

/// @brief The word `(value << 32) | status`.
/// @param status  kInvalid, kAggregate or kPrefix, with the exercise's own
///                bits from 2 to 31 (bits 0 and 1 are the status)
/// @param value   the 32-bit value
/// O(1): a shift and an or.
__device__ __forceinline__ Word make_word(unsigned status, unsigned value) {
  return (static_cast<Word>(value) << 32) | status;
}

/// @brief The status of word `w`: bits 0 and 1 (kInvalid, kAggregate or kPrefix).
__device__ __forceinline__ unsigned status_of(Word w) { return static_cast<unsigned>(w) & 3u; }

/// @brief The value of word `w`: bits 32 to 63.
__device__ __forceinline__ unsigned value_of(Word w) { return static_cast<unsigned>(w >> 32); }

}  // namespace cudalab::lookback
