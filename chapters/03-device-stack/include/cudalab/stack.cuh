/// @file stack.cuh
/// @brief Chapter 3, exercises 3.1 to 3.5: memory that kernels allocate for
///        themselves. A bump-allocated stack (DeviceStack), double-buffered
///        work lists built on it, and a bounded ring-buffer queue (DeviceQueue).
///
/// **The types.** DeviceStack and DeviceQueue are *views*: plain structs of
/// device pointers and a capacity, trivially copyable, so a kernel takes them
/// by value. They own nothing. Stack and Queue own the device memory (RAII)
/// and hand out views with `view()`. The exercises are the device-side
/// operations and the kernels; each is reached through one host launcher
/// declared below.
///
/// **Stack counter semantics (3.1 to 3.4).** The counter `*count` is a signed
/// 64-bit number of pushes minus pops. A push reserves slot `c` by adding 1
/// (it receives the old value c), a pop reserves slot `c - 1` by subtracting 1.
/// An operation whose slot lies outside [0, capacity) touches no element: a
/// push sets the flag kOverflow and drops its item, a pop sets kUnderflow and
/// returns no item. The counter keeps counting: after an overflow it exceeds
/// the capacity by the number of dropped pushes, after an underflow it is
/// negative. The stack's contents are always `data[0 .. size())` with
/// size() = clamp(count, 0, capacity). Nothing is ever written outside
/// `data[0 .. capacity)`. After an error the flags stay set until clear().
///
/// **Phases.** A launch may push or pop, never both: a pop may reserve a slot
/// whose push has reserved it but not yet written it. Successive launches on
/// one stream see each other's writes (a kernel boundary orders all memory
/// operations of the grid before the next kernel), so every reservation is a
/// relaxed atomic: the counter only hands out distinct slot numbers, it
/// publishes no data.
///
/// Common errors of every launcher:
/// @throws std::invalid_argument when a view's `data` is null with capacity
///         > 0, when one of its counter or flag pointers is null, when an
///         input or output pointer is null with a count > 0, or when a count
///         exceeds max_items; nothing is launched then and nothing is written.
/// @throws cudalab::CudaError when a CUDA call or a launch fails.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cudalab/args.hpp"
#include "cudalab/device.cuh"
#include "cudalab/device_buffer.cuh"
#include "cudalab/error.cuh"

/// @brief Device-side stacks and queues (chapter 3, exercises 3.1 to 3.5).
namespace cudalab::stack {

/// @brief The largest item count one launch accepts (2^32 − 1).
inline constexpr std::size_t max_items = std::numeric_limits<std::uint32_t>::max();

/// @brief Error flag bit: a push (or enqueue) found no free slot and dropped its item.
inline constexpr unsigned kOverflow = 1u;
/// @brief Error flag bit: a pop (or dequeue) found no item.
inline constexpr unsigned kUnderflow = 2u;

namespace detail {
/// Reads one value of type V from device memory: synchronizes `stream`.
template <class V>
V read_device_value(const V* ptr, cudaStream_t stream) {
  V value{};
  CUDALAB_CHECK(cudaMemcpyAsync(&value, ptr, sizeof(V), cudaMemcpyDeviceToHost, stream));
  CUDALAB_CHECK(cudaStreamSynchronize(stream));
  return value;
}
}  // namespace detail

/// @brief A view of a bounded stack in device memory: storage, capacity, a
///        device counter and a device error word (see the file description
///        for the counter semantics).
///
/// Trivially copyable: pass it to kernels by value. The host-side member
/// functions read the device counter or flags and therefore **synchronize**
/// `stream`, except clear(), which is asynchronous.
/// @tparam T a trivially copyable item type.
template <class T>
struct DeviceStack {
  T* data;                 ///< device pointer to `capacity` slots (may be null when capacity is 0)
  std::size_t capacity;    ///< number of slots
  long long* count;        ///< device pointer to the counter: pushes minus pops (may leave [0, capacity] after an error)
  unsigned int* errors;    ///< device pointer to the error word: kOverflow | kUnderflow bits

  /// @return the raw device counter. Synchronizes `stream`.
  long long counter(cudaStream_t stream = nullptr) const { return detail::read_device_value(count, stream); }
  /// @return the number of items held, clamp(counter, 0, capacity). Synchronizes `stream`.
  std::size_t size(cudaStream_t stream = nullptr) const {
    const long long c = counter(stream);
    if (c <= 0) return 0;
    return static_cast<unsigned long long>(c) < capacity ? static_cast<std::size_t>(c) : capacity;
  }
  /// @return the error word (kOverflow, kUnderflow bits). Synchronizes `stream`.
  unsigned flags(cudaStream_t stream = nullptr) const { return detail::read_device_value(errors, stream); }
  /// @return true when a push has dropped an item since the last clear(). Synchronizes `stream`.
  bool overflowed(cudaStream_t stream = nullptr) const { return (flags(stream) & kOverflow) != 0; }
  /// @return true when a pop has found no item since the last clear(). Synchronizes `stream`.
  bool underflowed(cudaStream_t stream = nullptr) const { return (flags(stream) & kUnderflow) != 0; }
  /// @brief Empties the stack and resets the flags: enqueues two memsets on
  ///        `stream` (asynchronous, does not touch the slots).
  void clear(cudaStream_t stream = nullptr) const {
    CUDALAB_CHECK(cudaMemsetAsync(count, 0, sizeof(long long), stream));
    CUDALAB_CHECK(cudaMemsetAsync(errors, 0, sizeof(unsigned), stream));
  }
};

/// @brief The owner of a stack's device memory (RAII, move only): `capacity`
///        slots, the counter and the error word, all freed in the destructor.
/// @tparam T a trivially copyable item type.
template <class T>
class Stack {
 public:
  /// @brief Allocates `capacity` slots (uninitialised) and a zero counter and
  ///        error word. Synchronous.
  /// @throws cudalab::CudaError when an allocation fails.
  explicit Stack(std::size_t capacity) : data_(capacity), count_(1), errors_(1) {
    CUDALAB_CHECK(cudaMemset(count_.data(), 0, sizeof(long long)));
    CUDALAB_CHECK(cudaMemset(errors_.data(), 0, sizeof(unsigned)));
  }
  /// @return the view kernels take by value.
  DeviceStack<T> view() noexcept { return {data_.data(), data_.size(), count_.data(), errors_.data()}; }
  /// @return the capacity in items.
  std::size_t capacity() const noexcept { return data_.size(); }
  /// @return the device pointer to the slots.
  T* data() noexcept { return data_.data(); }
  /// @copydoc DeviceStack::size
  std::size_t size(cudaStream_t stream = nullptr) { return view().size(stream); }
  /// @copydoc DeviceStack::counter
  long long counter(cudaStream_t stream = nullptr) { return view().counter(stream); }
  /// @copydoc DeviceStack::overflowed
  bool overflowed(cudaStream_t stream = nullptr) { return view().overflowed(stream); }
  /// @copydoc DeviceStack::underflowed
  bool underflowed(cudaStream_t stream = nullptr) { return view().underflowed(stream); }
  /// @copydoc DeviceStack::clear
  void clear(cudaStream_t stream = nullptr) { view().clear(stream); }
  /// @brief Replaces the contents by `items` (bottom first) and resets the
  ///        flags. Synchronous.
  /// @throws std::invalid_argument when items.size() > capacity().
  void assign(const std::vector<T>& items) {
    data_.upload(items);
    const auto c = static_cast<long long>(items.size());
    CUDALAB_CHECK(cudaMemcpy(count_.data(), &c, sizeof c, cudaMemcpyHostToDevice));
    CUDALAB_CHECK(cudaMemset(errors_.data(), 0, sizeof(unsigned)));
  }
  /// @return the items held, `data[0 .. size())`, bottom first. Synchronous.
  std::vector<T> contents() {
    std::vector<T> all = data_.download();
    all.resize(size());
    return all;
  }

 private:
  DeviceBuffer<T> data_;
  DeviceBuffer<long long> count_;
  DeviceBuffer<unsigned> errors_;
};

/// @brief A view of a bounded FIFO ring-buffer queue in device memory.
///
/// `*head` counts the dequeues and `*tail` the enqueues, both monotonically
/// in 64 bits (they never wrap in practice: 2^64 operations); the item with
/// sequence number k lives in `data[k mod capacity]`. Between launches
/// head ≤ tail ≤ head + capacity holds, so
/// size = tail − head, empty ⇔ tail = head, full ⇔ tail − head = capacity,
/// with every one of the `capacity` slots usable (see the lesson for the
/// proof and for the one-slot-empty alternative). A failed enqueue (full) or
/// dequeue (empty) takes its reservation back, so the counters stay exact.
/// Like DeviceStack: trivially copyable; counter(), size(), flags() and
/// friends synchronize `stream`; clear() is asynchronous.
/// @tparam T a trivially copyable item type.
template <class T>
struct DeviceQueue {
  T* data;                    ///< device pointer to `capacity` slots (may be null when capacity is 0)
  std::size_t capacity;       ///< number of slots
  unsigned long long* head;   ///< device pointer to the number of dequeues so far
  unsigned long long* tail;   ///< device pointer to the number of enqueues so far
  unsigned int* errors;       ///< device pointer to the error word: kOverflow | kUnderflow bits

  /// @return {head, tail} as read from the device. Synchronizes `stream`.
  std::pair<unsigned long long, unsigned long long> counters(cudaStream_t stream = nullptr) const {
    const unsigned long long h = detail::read_device_value(head, stream);
    return {h, detail::read_device_value(tail, stream)};
  }
  /// @return tail − head, the number of items held. Synchronizes `stream`.
  std::size_t size(cudaStream_t stream = nullptr) const {
    const auto [h, t] = counters(stream);
    return static_cast<std::size_t>(t - h);
  }
  /// @return the error word. Synchronizes `stream`.
  unsigned flags(cudaStream_t stream = nullptr) const { return detail::read_device_value(errors, stream); }
  /// @return true when an enqueue found the queue full since the last clear(). Synchronizes `stream`.
  bool overflowed(cudaStream_t stream = nullptr) const { return (flags(stream) & kOverflow) != 0; }
  /// @return true when a dequeue found the queue empty since the last clear(). Synchronizes `stream`.
  bool underflowed(cudaStream_t stream = nullptr) const { return (flags(stream) & kUnderflow) != 0; }
  /// @brief Empties the queue (head = tail = 0) and resets the flags;
  ///        asynchronous on `stream`.
  void clear(cudaStream_t stream = nullptr) const {
    CUDALAB_CHECK(cudaMemsetAsync(head, 0, sizeof(unsigned long long), stream));
    CUDALAB_CHECK(cudaMemsetAsync(tail, 0, sizeof(unsigned long long), stream));
    CUDALAB_CHECK(cudaMemsetAsync(errors, 0, sizeof(unsigned), stream));
  }
};

/// @brief The owner of a ring queue's device memory (RAII, move only).
/// @tparam T a trivially copyable item type.
template <class T>
class Queue {
 public:
  /// @brief Allocates `capacity` slots (uninitialised), head = tail = 0 and a
  ///        zero error word. Synchronous.
  /// @throws cudalab::CudaError when an allocation fails.
  explicit Queue(std::size_t capacity) : data_(capacity), counters_(2), errors_(1) {
    CUDALAB_CHECK(cudaMemset(counters_.data(), 0, 2 * sizeof(unsigned long long)));
    CUDALAB_CHECK(cudaMemset(errors_.data(), 0, sizeof(unsigned)));
  }
  /// @return the view kernels take by value.
  DeviceQueue<T> view() noexcept {
    return {data_.data(), data_.size(), counters_.data(), counters_.data() + 1, errors_.data()};
  }
  /// @return the capacity in items.
  std::size_t capacity() const noexcept { return data_.size(); }
  /// @copydoc DeviceQueue::size
  std::size_t size(cudaStream_t stream = nullptr) { return view().size(stream); }
  /// @copydoc DeviceQueue::counters
  std::pair<unsigned long long, unsigned long long> counters(cudaStream_t stream = nullptr) {
    return view().counters(stream);
  }
  /// @copydoc DeviceQueue::overflowed
  bool overflowed(cudaStream_t stream = nullptr) { return view().overflowed(stream); }
  /// @copydoc DeviceQueue::underflowed
  bool underflowed(cudaStream_t stream = nullptr) { return view().underflowed(stream); }
  /// @copydoc DeviceQueue::clear
  void clear(cudaStream_t stream = nullptr) { view().clear(stream); }
  /// @brief Sets head = tail = `position` (an empty queue whose next item
  ///        goes to slot position mod capacity) and resets the flags.
  ///        Synchronous. Tests use it to start next to the wrap-around.
  void reset_at(unsigned long long position) {
    const unsigned long long both[2] = {position, position};
    CUDALAB_CHECK(cudaMemcpy(counters_.data(), both, sizeof both, cudaMemcpyHostToDevice));
    CUDALAB_CHECK(cudaMemset(errors_.data(), 0, sizeof(unsigned)));
  }

 private:
  DeviceBuffer<T> data_;
  DeviceBuffer<unsigned long long> counters_;
  DeviceBuffer<unsigned> errors_;
};

// ----------------------------------------------------------------------------- exercises

/// @brief Exercise 3.1: thread i pushes `items[i]` when `push_flags[i] != 0`
///        (every thread when `push_flags` is null), each push reserving its
///        slot with one relaxed atomic fetch-add on the counter.
///
/// The slots of the pushed items are unspecified (any interleaving); the
/// stack afterwards holds the previous items plus every pushed item exactly
/// once, as long as they fit. Pushes past the capacity set kOverflow and
/// drop their items (see the file description); which items are dropped is
/// unspecified.
/// @param stack      the stack to push to (no pop may run concurrently)
/// @param items      device pointer to n items
/// @param push_flags device pointer to n flags, or null for "every thread pushes"
/// @param n          number of threads, 0 ≤ n ≤ max_items
/// @param stream     the stream to run on; asynchronous
/// @throws std::invalid_argument, cudalab::CudaError as in the file description.
/// Work O(n); steps O(number of pushes) in the worst case, since atomics on
/// one address are serialized (but see the lesson: nvcc aggregates them per
/// warp on its own). Source: the CUDA C++ Programming Guide, "Atomic
/// Functions"; libcu++ `cuda::atomic_ref`.
void push_atomic(DeviceStack<int> stack, const int* items, const std::uint8_t* push_flags, std::size_t n,
                 cudaStream_t stream = nullptr);

/// @brief Exercise 3.2: the push of 3.1 with one atomic per warp: the lanes
///        that push count themselves with a ballot, one lane reserves a run of
///        slots for all of them, and lane ranks (the number of pushing lanes
///        below) place them.
///
/// Same parameters, semantics and errors as push_atomic, plus an order
/// promise: the pushing lanes of one warp (threads 32w .. 32w + 31) receive
/// consecutive slots in lane order.
/// @param stack      the stack to push to (no pop may run concurrently)
/// @param items      device pointer to n items
/// @param push_flags device pointer to n flags, or null for "every thread pushes"
/// @param n          number of threads, 0 ≤ n ≤ max_items
/// @param stream     the stream to run on; asynchronous
/// Work O(n); one atomic per warp that pushes.
/// Source: A. Adinets, "CUDA Pro Tip: Optimized Filtering with
/// Warp-Aggregated Atomics", NVIDIA Developer Blog, 2014.
void push_warp_aggregated(DeviceStack<int> stack, const int* items, const std::uint8_t* push_flags,
                          std::size_t n, cudaStream_t stream = nullptr);

/// @brief Threads per block of pop_batch: the order promise below is per
///        run of pop_batch_block consecutive outputs.
inline constexpr unsigned pop_batch_block = 256;

/// @brief Exercise 3.3: pops `count` items in one launch, one atomic per
///        block: block b reserves the k = min(pop_batch_block, count − 256 b)
///        topmost slots with one fetch-sub of k, and its thread t writes the
///        item of slot (old counter − 1 − t) to `out[256 b + t]`.
///
/// Outputs whose slot lies outside [0, capacity) receive `empty` and set
/// kUnderflow. With c the counter before the call (0 ≤ c ≤ capacity, no
/// error), the call moves out exactly the items of slots
/// [max(0, c − count), c), each once, writes `empty` to the other
/// count − min(c, count) outputs, and leaves the counter at c − count
/// (negative after an underflow). Within each run of pop_batch_block outputs
/// the items come top first from consecutive slots. No push may run
/// concurrently. The slots are not modified.
/// @param stack  the stack to pop from
/// @param count  number of items to pop, 0 ≤ count ≤ max_items
/// @param out    device pointer to `count` outputs
/// @param empty  the value written where no item was found
/// @param stream the stream to run on; asynchronous
/// @throws std::invalid_argument, cudalab::CudaError as in the file description.
/// Work O(count); ⌈count / 256⌉ atomics.
/// Source: the CUDA C++ Programming Guide, "Atomic Functions" and
/// "Synchronization Functions".
void pop_batch(DeviceStack<int> stack, std::size_t count, int* out, int empty, cudaStream_t stream = nullptr);

/// @brief The implicit binary tree that exercise 3.4 expands, level by level.
///
/// Nodes are numbered as in a binary heap: node v ≥ 1 has depth ⌊log2 v⌋
/// and the possible children 2v and 2v + 1. Child c of v exists when
/// v ≥ 1, depth(v) < max_depth and the top 10 bits of a hash of (seed, c)
/// are below `keep_per_1024`. So each node has 0, 1 or 2 children, each with
/// probability keep_per_1024 / 1024, and no node is deeper than max_depth.
struct TreeRule {
  std::uint64_t seed;          ///< selects the tree
  unsigned max_depth;          ///< the deepest level, at most 30 (so that ids fit in int)
  unsigned keep_per_1024;      ///< the probability of each child, in 1/1024 (0 to 1024)
};

/// @brief The depth of heap node v ≥ 1: ⌊log2 v⌋ (0 for v ≤ 1).
__host__ __device__ inline unsigned node_depth(int v) {
  unsigned d = 0;
  for (auto u = static_cast<unsigned>(v > 0 ? v : 0); u > 1; u >>= 1) ++d;
  return d;
}

/// @brief Whether node v has its child 2v + `which` (`which` is 0 or 1)
///        under `rule`; see TreeRule. Work O(1). The hash is SplitMix64
///        (Steele, Lea and Flood, OOPSLA 2014).
__host__ __device__ inline bool has_child(const TreeRule& rule, int v, unsigned which) {
  if (v < 1 || node_depth(v) >= rule.max_depth) return false;
  std::uint64_t x = rule.seed ^ (0x9E3779B97F4A7C15ull * (2ull * static_cast<unsigned>(v) + which + 1));
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  x ^= x >> 31;
  return (x >> 54) < rule.keep_per_1024;
}

/// @brief The deepest max_depth a TreeRule may have.
inline constexpr unsigned max_tree_depth = 30;

/// @brief Exercise 3.4: expands the tree of `rule` from `roots`, level by
///        level, with two work lists: one launch reads the active list,
///        writes it to `visited` and pushes the children into the next list;
///        the host swaps the lists and loops until the next list is empty.
///
/// Level 0 is the roots; level ℓ + 1 holds the existing children of level
/// ℓ's nodes. Each level is written to `visited[offsets[ℓ] .. offsets[ℓ+1])`
/// in an unspecified order (the order of its list). Roots may be any int:
/// nodes < 1 or at depth ≥ max_depth have no children, so the loop runs at
/// most max_depth + 1 levels.
/// @param roots            device pointer to n_roots node ids
/// @param n_roots          number of roots, 0 ≤ n_roots ≤ max_items
/// @param rule             the tree (max_depth ≤ 30, keep_per_1024 ≤ 1024)
/// @param visited          device pointer to `visited_capacity` outputs
/// @param visited_capacity room in `visited`
/// @param stream           the stream to run on
/// @return the level offsets: offsets[0] = 0, offsets.back() = the number of
///         nodes visited, one more entry than there are levels.
/// @throws std::invalid_argument when `roots` or `visited` is null with a
///         count > 0, n_roots > max_items or the rule is out of range
///         (before any CUDA call).
/// @throws std::length_error when the tree has more than visited_capacity
///         nodes; `visited` then holds the levels that fit.
/// @throws std::logic_error when a level beyond max_depth is non-empty
///         (children were pushed that the rule does not create).
/// @throws cudalab::CudaError when a CUDA call or a launch fails.
/// @note Synchronous: the host reads each next list's size before the next
///       level (one stream synchronization per level). Allocates two work
///       lists of visited_capacity items each for the duration of the call.
/// Work O(nodes); steps O(levels · log(level size)) plus one host round trip
/// per level. Source: the level-by-level large-node stage of K. Zhou, Q. Hou,
/// R. Wang and B. Guo, "Real-Time KD-Tree Construction on Graphics
/// Hardware", ACM TOG 27(5), 2008.
std::vector<std::size_t> expand_until_empty(const int* roots, std::size_t n_roots, TreeRule rule, int* visited,
                                            std::size_t visited_capacity, cudaStream_t stream = nullptr);

/// @brief Exercise 3.5 (enqueue): thread i appends `items[i]` to the ring
///        queue when `push_flags[i] != 0` (every thread when null).
///
/// Each enqueue reserves sequence number t with a relaxed fetch-add on
/// `*tail` and, when t − head < capacity, writes `data[t mod capacity]`;
/// otherwise the queue is full: it gives the reservation back (fetch-sub),
/// sets kOverflow and drops its item. No dequeue may run concurrently (head
/// is constant during the launch); then exactly min(enqueues, free slots)
/// items are stored, each once, and tail − head never exceeds capacity.
/// @param queue      the queue
/// @param items      device pointer to n items
/// @param push_flags device pointer to n flags, or null for "every thread enqueues"
/// @param n          number of threads, 0 ≤ n ≤ max_items
/// @param stream     the stream to run on; asynchronous
/// @throws std::invalid_argument, cudalab::CudaError as in the file description.
/// Work O(n). Source: the bounded buffer of E. W. Dijkstra, "Cooperating
/// Sequential Processes", 1965; T. R. W. Scogland and W. Feng, "Design and
/// Evaluation of Scalable Concurrent Queues for Many-Core Architectures",
/// ICPE 2015.
void ring_queue_enqueue(DeviceQueue<int> queue, const int* items, const std::uint8_t* push_flags, std::size_t n,
                        cudaStream_t stream = nullptr);

/// @brief Exercise 3.5 (dequeue): thread i removes the oldest item into
///        `out[i]`, or writes `empty` when the queue is empty.
///
/// Each dequeue reserves sequence number h with a relaxed fetch-add on
/// `*head` and, when h < tail, reads `data[h mod capacity]`; otherwise it
/// gives the reservation back, sets kUnderflow and writes `empty`. No
/// enqueue may run concurrently (tail is constant during the launch); then
/// the call takes out exactly the min(count, size) oldest items, each once
/// (FIFO between launches; within one launch the outputs are in any order).
/// @param queue  the queue
/// @param count  number of threads, 0 ≤ count ≤ max_items
/// @param out    device pointer to `count` outputs
/// @param empty  the value written where no item was found
/// @param stream the stream to run on; asynchronous
/// @throws std::invalid_argument, cudalab::CudaError as in the file description.
/// Work O(count). Source: as ring_queue_enqueue.
void ring_queue_dequeue(DeviceQueue<int> queue, std::size_t count, int* out, int empty,
                        cudaStream_t stream = nullptr);

namespace detail {
/// @brief The checks of a stack view: `data` not null when capacity > 0,
///        `count` and `errors` not null.
/// @throws std::invalid_argument as described in the file description.
template <class T>
void check_stack(const char* function, const DeviceStack<T>& s) {
  require_pointer(function, "stack.data", s.data, s.capacity);
  require_pointer(function, "stack.count", s.count, 1);
  require_pointer(function, "stack.errors", s.errors, 1);
}
/// @brief The checks of a queue view: `data` not null when capacity > 0,
///        `head`, `tail` and `errors` not null.
/// @throws std::invalid_argument as described in the file description.
template <class T>
void check_queue(const char* function, const DeviceQueue<T>& q) {
  require_pointer(function, "queue.data", q.data, q.capacity);
  require_pointer(function, "queue.head", q.head, 1);
  require_pointer(function, "queue.tail", q.tail, 1);
  require_pointer(function, "queue.errors", q.errors, 1);
}
/// @brief check_stack or check_queue, by the view's type (for check_batch).
/// @throws std::invalid_argument as described there.
template <class T>
void check_view(const char* function, const DeviceStack<T>& s) {
  check_stack(function, s);
}
/// @brief check_stack or check_queue, by the view's type (for check_batch).
/// @throws std::invalid_argument as described there.
template <class T>
void check_view(const char* function, const DeviceQueue<T>& q) {
  check_queue(function, q);
}
/// @brief The checks every push, pop, enqueue and dequeue launcher
///        performs first, in this order: the view's (check_view), then the
///        batch's.
/// @tparam View DeviceStack<T> or DeviceQueue<T>
/// @param function the public function being called, for the messages
/// @param view     the stack or queue the call works on
/// @param what     the name of the batch's pointer parameter, for the message
/// @param items    the batch's device pointer, to n items
/// @param n        the batch's size
/// @throws std::invalid_argument when the view is malformed (see check_view),
///         `items` is null with n > 0, or n > max_items.
template <class View>
void check_batch(const char* function, const View& view, const char* what, const void* items, std::size_t n) {
  check_view(function, view);
  require_pointer(function, what, items, n);
  require_count_at_most(function, n, max_items);
}
/// @brief The start of every push, pop, enqueue and dequeue launcher:
///        check_batch, and whether there is a kernel to launch.
/// @tparam View DeviceStack<T> or DeviceQueue<T>
/// @param function the public function being called, for the messages
/// @param view     the stack or queue the call works on
/// @param what     the name of the batch's pointer parameter, for the message
/// @param items    the batch's device pointer, to n items
/// @param n        the batch's size
/// @return false for n = 0, where the launcher is done (nothing is launched).
/// @throws std::invalid_argument as check_batch (before any CUDA call).
/// O(1); no CUDA call.
template <class View>
bool start_batch(const char* function, const View& view, const char* what, const void* items, std::size_t n) {
  check_batch(function, view, what, items, n);
  return n != 0;
}
/// @brief The checks of a TreeRule.
/// @throws std::invalid_argument when max_depth > 30 or keep_per_1024 > 1024.
inline void check_rule(const char* function, const TreeRule& rule) {
  if (rule.max_depth > max_tree_depth || rule.keep_per_1024 > 1024)
    throw std::invalid_argument(std::string(function) + ": TreeRule out of range (max_depth " +
                                std::to_string(rule.max_depth) + " > 30 or keep_per_1024 " +
                                std::to_string(rule.keep_per_1024) + " > 1024)");
}
}  // namespace detail

}  // namespace cudalab::stack
