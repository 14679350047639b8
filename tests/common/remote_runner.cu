// The runner's side of cudalab/test/remote.hpp: the program that holds the
// student's object. It maps the buffers each call can reach, runs the call,
// synchronizes, unmaps them and answers. It decides nothing: the checker
// that started it reads the buffers and gives the verdict.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <map>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cudalab/error.cuh"
#include "cudalab/test/remote.hpp"
#include "remote_common.hpp"

namespace cudalab::remote {

void register_exercise();  // the exercise's functions (remote_serve.cu)

namespace {

std::map<std::string, Handler>& handlers() {
  static std::map<std::string, Handler> h;
  return h;
}

struct Mapping {
  CUdeviceptr va;
  std::size_t size;
};

bool reply(int sock, wire::Status status, const std::string& type, const std::string& what,
           const Bytes& result = {}, std::size_t result_bytes = 0) {
  Writer w;
  w.put(static_cast<std::uint32_t>(status));
  w.put(static_cast<std::uint64_t>(type.size()));
  w.put_raw(type.data(), type.size());
  w.put(static_cast<std::uint64_t>(what.size()));
  w.put_raw(what.data(), what.size());
  w.put(static_cast<std::uint64_t>(result_bytes));
  w.put_raw(result.data(), result_bytes);
  const std::size_t n = w.size();
  Bytes b = w.take();
  return wire::send_message(sock, wire::kReply, b.data(), n);
}

bool ready(int sock, bool ok, const std::string& why) {
  Writer w;
  w.put(static_cast<std::uint32_t>(ok ? 1 : 0));
  w.put(static_cast<std::uint64_t>(why.size()));
  w.put_raw(why.data(), why.size());
  const std::size_t n = w.size();
  Bytes b = w.take();
  return wire::send_message(sock, wire::kReady, b.data(), n);
}

int serve_loop(int sock, CUdeviceptr base, std::size_t size) {
  wire::Driver drv;
  int device = 0;
  try {
    if (size == 0) throw std::length_error("");  // no GPU in the checker: no memory to share
    CUDALAB_CHECK(cudaFree(nullptr));
    CUDALAB_CHECK(cudaGetDevice(&device));
    drv.load();
    CUdeviceptr got = 0;
    drv.check(drv.reserve(&got, size, 0, base, 0), "reserving the checker's address range");
    if (got != base) {
      drv.unreserve(got, size);
      throw std::runtime_error("the checker's address range is taken in the runner");
    }
  } catch (const std::length_error&) {
    // Serve calls that reach no device memory (argument checks).
  } catch (const std::exception& e) {
    ready(sock, false, e.what());
    return 3;
  }
  if (!ready(sock, true, "")) return 1;
  cudaStream_t stream = nullptr;
  if (size != 0 && cudaStreamCreate(&stream) != cudaSuccess) return 3;
  std::vector<Mapping> mapped;
  const CUmemAccessDesc access = wire::access_desc(device);
  for (;;) {
    wire::Header h{};
    Bytes payload;
    std::vector<int> fds;
    if (!wire::recv_message(sock, &h, &payload, &fds)) return 0;  // the checker is done
    if (h.kind == wire::kMap) {
      const std::size_t pairs = h.bytes / 16;
      for (std::size_t i = 0; i < pairs && i < fds.size(); ++i) {
        const CUdeviceptr va = payload[2 * i];
        const std::size_t bytes = payload[2 * i + 1];
        CUmemGenericAllocationHandle handle = 0;
        CUresult r = drv.import_handle(&handle, reinterpret_cast<void*>(static_cast<std::uintptr_t>(fds[i])),
                                       CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
        if (r == CUDA_SUCCESS) {
          r = drv.map(va, bytes, 0, handle, 0);
          drv.release(handle);  // the mapping keeps the memory
        }
        if (r == CUDA_SUCCESS) r = drv.set_access(va, bytes, &access, 1);
        if (r != CUDA_SUCCESS) {
          reply(sock, wire::kBadRequest, "", "mapping a buffer in the runner failed: " + drv.name(r));
          return 3;
        }
        mapped.push_back({va, bytes});
      }
      for (int fd : fds) close(fd);
      continue;
    }
    for (int fd : fds) close(fd);
    if (h.kind != wire::kCall) return 3;
    Reader r(payload.data(), h.bytes);
    std::string key;
    std::size_t arg_bytes = 0;
    const char* args = nullptr;
    try {
      const auto key_len = r.get<std::uint64_t>();
      key.assign(r.get_raw(key_len), key_len);
      arg_bytes = r.get<std::uint64_t>();
      args = r.get_raw(arg_bytes);
    } catch (const std::exception& e) {
      reply(sock, wire::kBadRequest, "", e.what());
      return 3;
    }
    auto it = handlers().find(key);
    if (it == handlers().end()) {
      reply(sock, wire::kBadRequest, "", "the runner has no function " + key);
      return 3;
    }
    Bytes arg_words((arg_bytes + 15) / 16 * 2, 0);
    std::memcpy(arg_words.data(), args, arg_bytes);
    Reader ar(arg_words.data(), arg_bytes);
    Bytes result;
    std::size_t result_bytes = 0;
    wire::Status status = wire::kOk;
    std::string type, what;
    try {
      result = it->second(ar, stream, &result_bytes);
    } catch (const cudalab::CudaError& e) {
      status = wire::kThrew, type = "cudalab::CudaError", what = e.what();
    } catch (const std::invalid_argument& e) {
      status = wire::kThrew, type = "std::invalid_argument", what = e.what();
    } catch (const std::out_of_range& e) {
      status = wire::kThrew, type = "std::out_of_range", what = e.what();
    } catch (const std::length_error& e) {
      status = wire::kThrew, type = "std::length_error", what = e.what();
    } catch (const std::domain_error& e) {
      status = wire::kThrew, type = "std::domain_error", what = e.what();
    } catch (const std::logic_error& e) {
      status = wire::kThrew, type = "std::logic_error", what = e.what();
    } catch (const std::overflow_error& e) {
      status = wire::kThrew, type = "std::overflow_error", what = e.what();
    } catch (const std::underflow_error& e) {
      status = wire::kThrew, type = "std::underflow_error", what = e.what();
    } catch (const std::range_error& e) {
      status = wire::kThrew, type = "std::range_error", what = e.what();
    } catch (const std::bad_alloc&) {
      status = wire::kThrew, type = "std::bad_alloc", what = "";
    } catch (const std::exception& e) {
      status = wire::kThrew, type = "std::exception", what = e.what();
    } catch (...) {
      status = wire::kThrew, type = "an exception of an unknown type", what = "";
    }
    const cudaError_t err = size != 0 ? cudaDeviceSynchronize() : cudaSuccess;
    for (const Mapping& m : mapped) drv.unmap(m.va, m.size);
    mapped.clear();
    if (err != cudaSuccess) {
      reply(sock, wire::kCudaFault, "", std::string(cudaGetErrorName(err)) + " (" + cudaGetErrorString(err) + ")");
      return 2;  // the context is unusable: the checker starts a new runner
    }
    if (!reply(sock, status, type, what, result, result_bytes)) return 1;
  }
}

}  // namespace

void add_handler(const std::string& key, Handler h) { handlers()[key] = std::move(h); }

int run_server(int sock, CUdeviceptr base, std::size_t size) { return serve_loop(sock, base, size); }

}  // namespace cudalab::remote

int main(int argc, char** argv) {
  int sock = -1;
  unsigned long long base = 0, size = 0;
  for (int i = 1; i + 1 < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--cudalab-runner-fd") sock = std::atoi(argv[++i]);
    else if (a == "--cudalab-address-range") std::sscanf(argv[++i], "%llu:%llu", &base, &size);
  }
  if (sock < 0) {
    std::fprintf(stderr,
                 "%s holds an exercise's code for its test program, which starts it; run the test "
                 "program (the same name with _test_ for _runner_) instead.\n",
                 argc > 0 ? argv[0] : "runner");
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  cudalab::remote::register_exercise();
  return cudalab::remote::run_server(sock, static_cast<CUdeviceptr>(base), static_cast<std::size_t>(size));
}
