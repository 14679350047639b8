/// @file csr.cuh
/// @brief Graphs in device memory: DeviceCsr and DeviceEll own the arrays
///        (DeviceBuffer), CsrView and EllView are the trivially copyable
///        views that host launchers take and kernels read.
///
/// Layouts and types are those of cudalab/graph/csr.hpp.
#pragma once

#include <cstddef>

#include "cudalab/device_buffer.cuh"
#include "cudalab/graph/csr.hpp"

namespace cudalab::graph {

/// @brief A non-owning view of a CSR graph in device memory (pass by value
///        to a launcher or a kernel).
///
/// Pointers are device pointers; each may be null when its array is empty
/// (`row_offsets` is never empty for a graph with vertices). `has_negative_weights`
/// is a fact about the weights recorded on the host when the view was made
/// (DeviceCsr computes it), so launchers can reject negative weights before
/// any CUDA call.
struct CsrView {
  std::size_t num_vertices = 0;        ///< n
  std::size_t num_edges = 0;           ///< m
  const offset_t* row_offsets = nullptr;  ///< n + 1 offsets
  const vertex_t* col_indices = nullptr;  ///< m heads
  const weight_t* weights = nullptr;      ///< m lengths
  bool has_negative_weights = false;      ///< true when some weight is below 0
};

/// @brief A non-owning view of an ELL graph in device memory (see Ell for
///        the column-major layout and the padding value Ell::kPadding).
struct EllView {
  std::size_t num_rows = 0;               ///< n
  std::size_t width = 0;                  ///< padded row length
  const vertex_t* col_indices = nullptr;  ///< num_rows * width entries, column-major
  const weight_t* weights = nullptr;      ///< num_rows * width entries, column-major
  bool has_negative_weights = false;      ///< true when some weight is below 0
};

/// @brief A CSR graph copied to device memory (owning, move-only).
class DeviceCsr {
 public:
  /// An empty graph (no vertices, no allocation).
  DeviceCsr() = default;

  /// @brief Validates `g` and copies its three arrays to the device
  ///        (synchronous copies).
  /// @throws std::invalid_argument when `g` is not valid (Csr::validate).
  /// @throws CudaError when an allocation or a copy fails.
  /// Work O(n + m).
  explicit DeviceCsr(const Csr& g)
      : num_vertices_((g.validate(), g.num_vertices())),
        negative_(g.has_negative_weights()),
        row_offsets_(g.row_offsets),
        col_indices_(g.col_indices),
        weights_(g.weights) {}

  /// @return the view that launchers and kernels take.
  CsrView view() const noexcept {
    return CsrView{num_vertices_, col_indices_.size(), row_offsets_.data(), col_indices_.data(), weights_.data(),
                   negative_};
  }
  /// @return n.
  std::size_t num_vertices() const noexcept { return num_vertices_; }
  /// @return m.
  std::size_t num_edges() const noexcept { return col_indices_.size(); }

 private:
  std::size_t num_vertices_ = 0;
  bool negative_ = false;
  DeviceBuffer<offset_t> row_offsets_;
  DeviceBuffer<vertex_t> col_indices_;
  DeviceBuffer<weight_t> weights_;
};

/// @brief An ELL graph copied to device memory (owning, move-only).
class DeviceEll {
 public:
  /// An empty graph (no rows, no allocation).
  DeviceEll() = default;

  /// @brief Copies `g` to the device (synchronous copies).
  /// @throws std::invalid_argument when the arrays' lengths are not num_rows * width.
  /// @throws CudaError when an allocation or a copy fails.
  /// Work O(n * width).
  explicit DeviceEll(const Ell& g)
      : num_rows_(g.num_rows), width_(g.width), col_indices_(checked(g).col_indices), weights_(g.weights) {
    for (weight_t w : g.weights)
      if (w < 0) negative_ = true;
  }

  /// @return the view that launchers and kernels take.
  EllView view() const noexcept {
    return EllView{num_rows_, width_, col_indices_.data(), weights_.data(), negative_};
  }

 private:
  static const Ell& checked(const Ell& g) {
    if (g.col_indices.size() != g.num_rows * g.width || g.weights.size() != g.num_rows * g.width)
      throw std::invalid_argument("DeviceEll: arrays are not num_rows * width long");
    return g;
  }
  std::size_t num_rows_ = 0;
  std::size_t width_ = 0;
  bool negative_ = false;
  DeviceBuffer<vertex_t> col_indices_;
  DeviceBuffer<weight_t> weights_;
};

}  // namespace cudalab::graph
