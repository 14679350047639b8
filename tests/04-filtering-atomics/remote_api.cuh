// Chapter 4's API as the checker forwards it to the runner: one list per
// exercise, X(return type, namespace, function, (parameters), (arguments)),
// or X##_TEMPLATE(..., function, (template arguments), ...) for the filter
// templates, which the student's file instantiates (CUDALAB_FILTER_INSTANTIATE).
// See cudalab/test/remote.hpp. The chapter's types are qualified (the runner
// names each function's type outside its namespace).
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>

#include "cudalab/filter.cuh"
#include "cudalab/test/remote.hpp"

// ----------------------------------------------------------------------------- 4.1 to 4.6

#define CUDALAB_REMOTE_FILTER_ONE(X, fn, T, Pred)                                                   \
  X##_TEMPLATE(void, cudalab::filter, fn, (T, Pred),                                                \
               (const T* in, std::size_t n, Pred pred, T* out, std::size_t capacity,                \
                unsigned long long* count, cudaStream_t stream),                                    \
               (in, n, pred, out, capacity, count, stream))

/// The six instantiations of CUDALAB_FILTER_INSTANTIATE, all called by the battery.
#define CUDALAB_REMOTE_FILTER(X, fn)                                                                \
  CUDALAB_REMOTE_FILTER_ONE(X, fn, int, cudalab::filter::LessThan<int>)                             \
  CUDALAB_REMOTE_FILTER_ONE(X, fn, int, cudalab::filter::IsEven)                                    \
  CUDALAB_REMOTE_FILTER_ONE(X, fn, int, cudalab::filter::InRange<int>)                              \
  CUDALAB_REMOTE_FILTER_ONE(X, fn, long long, cudalab::filter::LessThan<long long>)                 \
  CUDALAB_REMOTE_FILTER_ONE(X, fn, long long, cudalab::filter::IsEven)                              \
  CUDALAB_REMOTE_FILTER_ONE(X, fn, long long, cudalab::filter::InRange<long long>)

#define CUDALAB_REMOTE_copy_if_global_atomic(X) CUDALAB_REMOTE_FILTER(X, copy_if_global_atomic)
#define CUDALAB_REMOTE_copy_if_shared_atomic(X) CUDALAB_REMOTE_FILTER(X, copy_if_shared_atomic)
#define CUDALAB_REMOTE_copy_if_block_scan(X) CUDALAB_REMOTE_FILTER(X, copy_if_block_scan)
#define CUDALAB_REMOTE_copy_if_warp_aggregated(X) CUDALAB_REMOTE_FILTER(X, copy_if_warp_aggregated)
#define CUDALAB_REMOTE_copy_if_cooperative_groups(X) CUDALAB_REMOTE_FILTER(X, copy_if_cooperative_groups)
#define CUDALAB_REMOTE_copy_if_decoupled_lookback(X) CUDALAB_REMOTE_FILTER(X, copy_if_decoupled_lookback)

// ----------------------------------------------------------------------------- 4.7

#define CUDALAB_REMOTE_retrieve_all(X)                                                              \
  X(void, cudalab::filter, retrieve_all,                                                            \
    (const cudalab::filter::SubTable* tables, std::size_t num_tables, long long* keys_out,          \
     long long* values_out, std::size_t capacity, unsigned long long* count, cudaStream_t stream),  \
    (tables, num_tables, keys_out, values_out, capacity, count, stream))

namespace cudalab::filter::remote_wire {

/// retrieve_all's `tables` is a host pointer: its views travel by value
/// (their `slots` are device pointers, mapped like any argument's).
struct SubTables {
  SubTable table[max_sub_tables + 1];  ///< the views, zero past the ones sent
  std::uint64_t present;               ///< 0: `tables` was null
};

using RetrieveAll = void(const SubTable*, std::size_t, long long*, long long*, std::size_t, unsigned long long*,
                         cudaStream_t);

}  // namespace cudalab::filter::remote_wire

namespace cudalab::remote {

/// Checker side of retrieve_all: sends the views of `tables` (all of them
/// up to max_sub_tables + 1, none beyond: a longer list is rejected anyway,
/// and the caller's array may be shorter than num_tables says).
template <>
struct Proxy<filter::remote_wire::RetrieveAll> {
  static void call(const char* name, const filter::SubTable* tables, std::size_t num_tables, long long* keys_out,
                   long long* values_out, std::size_t capacity, unsigned long long* count, cudaStream_t stream) {
    filter::remote_wire::SubTables t{};
    t.present = tables != nullptr;
    if (tables != nullptr && num_tables <= std::size(t.table)) std::copy(tables, tables + num_tables, t.table);
    Writer w;
    w.put(t);
    w.put(num_tables);
    w.put(keys_out);
    w.put(values_out);
    w.put(capacity);
    w.put(count);
    Arg<cudaStream_t>::put(w, stream);
    const std::size_t n = w.size();
    std::size_t reply = 0;
    invoke(key<filter::remote_wire::RetrieveAll>(name), w.take(), n, &reply);
  }
};

/// Runner side of retrieve_all: the student's function reads the views from
/// the runner's copy.
template <>
struct Serve<filter::remote_wire::RetrieveAll> {
  static Handler make(filter::remote_wire::RetrieveAll* fn) {
    return [fn](Reader& r, cudaStream_t s, std::size_t* bytes) -> Bytes {
      const auto t = r.get<filter::remote_wire::SubTables>();
      const auto num_tables = r.get<std::size_t>();
      const auto keys_out = r.get<long long*>();
      const auto values_out = r.get<long long*>();
      const auto capacity = r.get<std::size_t>();
      const auto count = r.get<unsigned long long*>();
      const cudaStream_t stream = Arg<cudaStream_t>::get(r, s);
      fn(t.present != 0 ? t.table : nullptr, num_tables, keys_out, values_out, capacity, count, stream);
      *bytes = 0;
      return {};
    };
  }
};

}  // namespace cudalab::remote
