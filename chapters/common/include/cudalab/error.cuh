/// @file error.cuh
/// @brief Typed errors and the checks that raise them: every CUDA call and
///        every kernel launch in cudalab goes through CUDALAB_CHECK or
///        CUDALAB_CHECK_LAUNCH.
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace cudalab {

/// @brief A CUDA runtime call failed.
///
/// Carries the file and line of the call, the call's text and the
/// `cudaError_t` it returned; what() reads
/// `file:line: call failed: cudaErrorX (description)`.
class CudaError : public std::runtime_error {
 public:
  /// @param code  the error the runtime returned (not cudaSuccess)
  /// @param call  the source text of the call, as written
  /// @param file  source file of the call
  /// @param line  source line of the call
  CudaError(cudaError_t code, const char* call, const char* file, int line)
      : std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + call +
                           " failed: " + cudaGetErrorName(code) + " (" +
                           cudaGetErrorString(code) + ")"),
        code_(code), call_(call), file_(file), line_(line) {}

  /// @return the CUDA error code.
  cudaError_t code() const noexcept { return code_; }
  /// @return the text of the failed call.
  const std::string& call() const noexcept { return call_; }
  /// @return the source file of the failed call.
  const std::string& file() const noexcept { return file_; }
  /// @return the source line of the failed call.
  int line() const noexcept { return line_; }

 private:
  cudaError_t code_;
  std::string call_;
  std::string file_;
  int line_;
};

/// @brief A malformed input file: names the file and the 1-based line.
class ParseError : public std::runtime_error {
 public:
  /// @param file    path of the file being read
  /// @param line    1-based line number of the offending line (0: the file as a whole)
  /// @param message what is wrong with it
  ParseError(const std::string& file, long line, const std::string& message)
      : std::runtime_error(file + ":" + std::to_string(line) + ": " + message),
        file_(file), line_(line) {}
  /// @return the path of the file.
  const std::string& file() const noexcept { return file_; }
  /// @return the 1-based line number (0 when the error concerns the whole file).
  long line() const noexcept { return line_; }

 private:
  std::string file_;
  long line_;
};

namespace detail {
/// Throws CudaError when `code` is not cudaSuccess. Used by the macros below.
inline void check_cuda(cudaError_t code, const char* call, const char* file, int line) {
  if (code != cudaSuccess) throw CudaError(code, call, file, line);
}
}  // namespace detail

}  // namespace cudalab

/// @brief Evaluates a CUDA runtime call and throws cudalab::CudaError if it failed.
#define CUDALAB_CHECK(call) ::cudalab::detail::check_cuda((call), #call, __FILE__, __LINE__)

/// @brief Checks the launch that was just made (bad configuration, missing
///        kernel image, a sticky error from an earlier kernel) and throws
///        cudalab::CudaError if there is one. Asynchronous faults inside the
///        kernel surface at the next synchronizing call, which is checked too.
#define CUDALAB_CHECK_LAUNCH() \
  ::cudalab::detail::check_cuda(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
