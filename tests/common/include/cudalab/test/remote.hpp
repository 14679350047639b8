/// @file remote.hpp
/// @brief Calls into the student's code in another process: the checker
///        (the test program: gtest, the battery, the verdict) never links the
///        student's object; the runner (the student's object and a small
///        server) executes each call on device memory the checker owns.
///
/// Why: a test program that links the student's code lets that code decide
/// its own verdict (a static initializer, `main`, atexit, rewriting the
/// report...). With the split, the student's code runs in a separate process,
/// usually sandboxed (tools/cudalab_grade/sandbox.py), and everything it can
/// do is write the device buffers of the current call; the checker reads and
/// checks them itself. This is the judge design of IOI's isolate/CMS and
/// DOMjudge (a trusted checker, an untrusted program), for CUDA.
///
/// How a call travels:
///  - The checker's device allocations (cudaMalloc, wrapped at link time)
///    are CUDA virtual-memory allocations (cuMemCreate) exportable as POSIX
///    file descriptors, placed in one reserved virtual-address range. A
///    sparse one (cudalab/test/sparse_device_array.cuh) takes its whole
///    length of that range but has memory only at its end.
///  - The runner reserves the same range, so a device pointer means the same
///    thing in both processes: arguments, and structs of device pointers,
///    travel as their bytes.
///  - Per call the checker finds the allocations reachable from the
///    argument bytes (a conservative scan: every aligned 8-byte word, and one
///    level of words inside small reachable buffers), sends their descriptors
///    over a Unix socket (SCM_RIGHTS), and the runner maps exactly those, runs
///    the function, synchronizes, unmaps them and answers with the return
///    value or the exception. Buffers the call cannot reach (the checker's
///    references) are never mapped in the runner.
///  - A runner that crashes, faults or hangs costs the call (an exception in
///    the checker's test); the next call starts a new runner.
///
/// Preconditions: every argument type is trivially copyable; device pointers
/// point into checker allocations made with cudaMalloc; a cudaStream_t
/// argument, null or not, is replaced by a stream of the runner (the checker synchronizes
/// the device before each call, and the call returns after the runner has
/// synchronized). Return types: void, trivially copyable, std::vector of a
/// trivially copyable type.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

namespace cudalab::remote {

/// Bytes of one call's arguments or one reply's value; 16-byte aligned words.
using Bytes = std::vector<std::uint64_t>;

/// @brief Appends `value`'s bytes at the next offset aligned for T.
class Writer {
 public:
  template <class T>
  void put(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>, "remote arguments must be trivially copyable");
    std::size_t off = align(sizeof(T) > 8 ? 16 : alignof(T));
    grow(off + sizeof(T));
    std::memcpy(reinterpret_cast<char*>(words_.data()) + off, &value, sizeof(T));
    size_ = off + sizeof(T);
  }
  void put_raw(const void* data, std::size_t bytes) {
    std::size_t off = align(16);
    grow(off + bytes);
    if (bytes != 0) std::memcpy(reinterpret_cast<char*>(words_.data()) + off, data, bytes);
    size_ = off + bytes;
  }
  std::size_t size() const { return size_; }
  Bytes take() { return std::move(words_); }

 private:
  std::size_t align(std::size_t a) const { return (size_ + a - 1) / a * a; }
  void grow(std::size_t bytes) { words_.resize((bytes + 15) / 16 * 2, 0); }
  Bytes words_;
  std::size_t size_ = 0;
};

/// @brief Reads values in the order a Writer put them; throws on a short message.
class Reader {
 public:
  Reader(const std::uint64_t* words, std::size_t bytes) : data_(reinterpret_cast<const char*>(words)), size_(bytes) {}
  template <class T>
  T get() {
    std::size_t off = align(sizeof(T) > 8 ? 16 : alignof(T));
    if (off + sizeof(T) > size_) throw std::length_error("cudalab remote: message too short");
    T value;
    std::memcpy(&value, data_ + off, sizeof(T));
    pos_ = off + sizeof(T);
    return value;
  }
  const char* get_raw(std::size_t bytes) {
    std::size_t off = align(16);
    // bytes comes from the message: a huge one must not wrap the sum past the check
    if (off > size_ || bytes > size_ - off) throw std::length_error("cudalab remote: message too short");
    pos_ = off + bytes;
    return data_ + off;
  }

 private:
  std::size_t align(std::size_t a) const { return (pos_ + a - 1) / a * a; }
  const char* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

/// Runner side: whether the current call's function was given the runner's
/// stream (it has a cudaStream_t parameter, and the runner has a device). The
/// runner clears it before each call; while it is set, work the function's
/// code enqueues on a default stream fails the call (remote_runner.cu).
inline bool& stream_given() {
  static bool given = false;
  return given;
}

/// How an argument of type T travels. Streams are the one exception to
/// "as its bytes": a stream of the checker means nothing in the runner.
template <class T>
struct Arg {
  static void put(Writer& w, const T& v) { w.put(v); }
  static T get(Reader& r, cudaStream_t) { return r.template get<T>(); }
};
/// A stream argument, null or not, becomes the runner's own stream (null only
/// in a runner without a device): the function always has a stream of its own
/// to enqueue on, as its contract says, so work it puts on the default stream
/// instead shows. The checker synchronizes before and the runner after the
/// call, so which stream the checker passed changes no result.
template <>
struct Arg<cudaStream_t> {
  static void put(Writer& w, cudaStream_t s) { w.put(static_cast<std::uint64_t>(s != nullptr)); }
  static cudaStream_t get(Reader& r, cudaStream_t runner_stream) {
    (void)r.get<std::uint64_t>();
    if (runner_stream != nullptr) stream_given() = true;
    return runner_stream;
  }
};

/// How a return value travels.
template <class R>
struct Ret {
  static void put(Writer& w, const R& v) { w.put(v); }
  static R get(Reader& r) { return r.template get<R>(); }
};
template <class T>
struct Ret<std::vector<T>> {
  static_assert(std::is_trivially_copyable_v<T>, "remote results must be trivially copyable");
  static void put(Writer& w, const std::vector<T>& v) {
    w.put(static_cast<std::uint64_t>(v.size()));
    w.put_raw(v.data(), v.size() * sizeof(T));
  }
  static std::vector<T> get(Reader& r) {
    const auto n = r.get<std::uint64_t>();
    if (n > (std::uint64_t{1} << 32)) throw std::length_error("cudalab remote: result too long");
    std::vector<T> v(static_cast<std::size_t>(n));
    std::memcpy(v.data(), r.get_raw(v.size() * sizeof(T)), v.size() * sizeof(T));
    return v;
  }
};

/// The key both processes compute for one function: its qualified name and
/// its function type (so that overloads differ).
template <class F>
std::string key(const char* name) {
  return std::string(name) + "|" + typeid(F).name();
}

/// The key of the runner's built-in null call: no exercise function, only the
/// way there and back (sockets, mappings, the runner's synchronization).
inline constexpr const char* kNullCall = "cudalab::remote::null";

/// @brief Checker side: sends one call and returns its result (or rethrows
///        the runner's exception). Defined in remote_checker.cu.
/// @throws whatever the student's function threw (std::invalid_argument,
///         std::out_of_range, ..., cudalab::CudaError), or std::runtime_error
///         when the runner crashed, hung or could not start.
Bytes invoke(const std::string& key, Bytes args, std::size_t arg_bytes, std::size_t* reply_bytes);

/// Checker side: the proxy of one function of type R(P...).
template <class F>
struct Proxy;
template <class R, class... P>
struct Proxy<R(P...)> {
  static R call(const char* name, P... p) {
    Writer w;
    (Arg<std::decay_t<P>>::put(w, p), ...);
    const std::size_t n = w.size();
    std::size_t reply = 0;
    Bytes out = invoke(key<R(P...)>(name), w.take(), n, &reply);
    if constexpr (!std::is_void_v<R>) {
      Reader r(out.data(), reply);
      return Ret<R>::get(r);
    }
  }
};

/// Runner side: a handler decodes the arguments, calls, encodes the result.
using Handler = std::function<Bytes(Reader&, cudaStream_t, std::size_t*)>;

template <class F>
struct Serve;
template <class R, class... P>
struct Serve<R(P...)> {
  static Handler make(R (*fn)(P...)) {
    return [fn](Reader& r, cudaStream_t s, std::size_t* bytes) -> Bytes {
      // Braced initialization evaluates the arguments left to right.
      std::tuple<std::decay_t<P>...> args{Arg<std::decay_t<P>>::get(r, s)...};
      Writer w;
      if constexpr (std::is_void_v<R>) {
        std::apply(fn, args);
      } else {
        Ret<R>::put(w, std::apply(fn, args));
      }
      *bytes = w.size();
      return w.take();
    };
  }
};

/// Runner side: registers one function under its key.
void add_handler(const std::string& key, Handler h);

template <class F>
void serve(const char* name, F* fn) {
  add_handler(key<F>(name), Serve<F>::make(fn));
}

}  // namespace cudalab::remote

#define CUDALAB_REMOTE_UNPAREN(...) __VA_ARGS__

/// @brief Checker side of one API function: defines `ns::name` with the
///        parameters `params` (parenthesized, named) forwarding `args`.
#define CUDALAB_REMOTE_PROXY(ret, ns, name, params, args)                                  \
  namespace ns {                                                                         \
  ret name params {                                                                      \
    return ::cudalab::remote::Proxy<ret params>::call(#ns "::" #name,                    \
                                                      CUDALAB_REMOTE_UNPAREN args);      \
  }                                                                                      \
  }

/// @brief Runner side of one API function: registers `ns::name` of that type.
#define CUDALAB_REMOTE_SERVE(ret, ns, name, params, args) \
  ::cudalab::remote::serve<ret params>(#ns "::" #name, static_cast<ret(*) params>(&ns::name));

/// @brief Checker side of one explicit instantiation of a function template
///        (the student's file instantiates it, e.g. CUDALAB_FILTER_INSTANTIATE):
///        defines the specialization `ns::name<targs>`, `targs` parenthesized.
///        A list reaches it as `X##_TEMPLATE(ret, ns, name, targs, params, args)`,
///        which names this macro or CUDALAB_REMOTE_SERVE_TEMPLATE. The key
///        holds the template arguments: two instantiations may share a type.
#define CUDALAB_REMOTE_PROXY_TEMPLATE(ret, ns, name, targs, params, args)                  \
  namespace ns {                                                                         \
  template <>                                                                            \
  ret name<CUDALAB_REMOTE_UNPAREN targs> params {                                        \
    return ::cudalab::remote::Proxy<ret params>::call(#ns "::" #name #targs,             \
                                                      CUDALAB_REMOTE_UNPAREN args);      \
  }                                                                                      \
  }

/// @brief Runner side of one explicit instantiation: registers `ns::name<targs>`.
#define CUDALAB_REMOTE_SERVE_TEMPLATE(ret, ns, name, targs, params, args) \
  ::cudalab::remote::serve<ret params>(#ns "::" #name #targs,              \
                                       static_cast<ret(*) params>(&ns::name<CUDALAB_REMOTE_UNPAREN targs>));
