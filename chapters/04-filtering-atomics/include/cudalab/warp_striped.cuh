/// @file warp_striped.cuh
/// @brief The shape of chapter 4's warp-aggregated kernels (exercises 4.4,
///        4.5 and 4.7): blocks of 8 warps, each warp taking a chunk of 256
///        consecutive elements in 8 rounds of 32.
///
/// Warp w of block b takes the chunk that starts at element (8 b + w) · 256;
/// in round r, lane l holds element 32 r + l of the chunk: a *warp-striped*
/// arrangement (CUB's term, cub::WarpLoad's WARP_LOAD_STRIPED), so each
/// round is one coalesced 128-byte access per warp of 4-byte elements. A
/// block covers a tile of 2048 elements: the launchers ask for
/// blocks_for(n, kTile) blocks of kThreads threads.
///
/// Given code: the layout is the same in every exercise that uses it, so
/// that their speeds compare; what each exercise writes is what it does
/// with the chunk.
#pragma once

/// @brief The block and chunk shape of the warp-aggregated kernels.
namespace cudalab::filter::warp_striped {

/// @brief Threads per block: 256.
inline constexpr int kThreads = 256;
/// @brief Warps per block: 8.
inline constexpr int kWarps = kThreads / 32;
/// @brief Rounds, elements per lane: 8.
inline constexpr int kRounds = 8;
/// @brief Consecutive elements per warp, its chunk: 256.
inline constexpr int kChunk = 32 * kRounds;
/// @brief Consecutive elements per block, its tile: 2048.
inline constexpr int kTile = kWarps * kChunk;

}  // namespace cudalab::filter::warp_striped
