// pmem.hpp — persistent memory in the C++ API of Cairn: DualArray<T>, an
// in-place versioned array, and FlushHelper, the asynchronous proactive
// flusher. Header-only over include/cairn/pmem.h (its rules, semantics and
// thread-safety hold; docs/pmem.md); no exception is thrown.
//
//   cairn::Status s;
//   auto u = cairn::pmem::DualArray<double>::Open("/mnt/pmem/u", n, {}, &s);
//   for (long long it = u->Iteration() + 1; it < iterations; ++it) {
//     std::span<const double> old = u->Consistent();
//     std::span<double> now = u->Working();
//     for (size_t i = 0; i < n; ++i) now[i] = old[i] + f(i);
//     if (!(s = u->Commit()).ok()) ...;
//   }
#ifndef CAIRN_PMEM_HPP_
#define CAIRN_PMEM_HPP_

#include <memory>
#include <span>
#include <string>
#include <type_traits>

#include "cairn/cairn.hpp"
#include "cairn/pmem.h"

namespace cairn {
inline namespace v1 {
namespace pmem {

enum class UpdatePattern : int {
  kAuto = CAIRN_PMEM_AUTO,
  kUniform = CAIRN_PMEM_UNIFORM,
  kNonUniform = CAIRN_PMEM_NONUNIFORM,
};
enum class Mode : int {
  kProfiling = CAIRN_PMEM_MODE_PROFILING,
  kInPlace = CAIRN_PMEM_MODE_IN_PLACE,
  kCopy = CAIRN_PMEM_MODE_COPY,
};

struct DualArrayOptions {
  UpdatePattern pattern = UpdatePattern::kAuto;
  bool async_flush = false;  // REQUIRES: a running FlushHelper
};

struct DualArrayInfo {
  Mode mode = Mode::kProfiling;
  bool is_pmem = false;
  long long iteration = -1;
  std::string reason;
};

// A working and a consistent version of an array of T in persistent memory.
// The spans are valid until the next Commit (the versions swap there).
template <typename T>
class DualArray {
  static_assert(std::is_trivially_copyable_v<T>, "DualArray holds plain bytes");

 public:
  // Opens or creates path; null with *status saying why.
  static std::unique_ptr<DualArray> Open(const std::string& path, size_t count,
                                         const DualArrayOptions& options, Status* status) {
    cairn_pmem_array_options c = CAIRN_PMEM_ARRAY_OPTIONS_INIT;
    c.update_pattern = static_cast<int>(options.pattern);
    c.async_flush = options.async_flush ? 1 : 0;
    cairn_pmem_array* handle = nullptr;
    *status = Status(cairn_pmem_array_open(path.c_str(), count, sizeof(T), &c, &handle));
    return status->ok() ? std::unique_ptr<DualArray>(new DualArray(handle, count)) : nullptr;
  }
  ~DualArray() { cairn_pmem_array_close(&handle_); }
  DualArray(const DualArray&) = delete;
  DualArray& operator=(const DualArray&) = delete;

  size_t size() const { return count_; }
  // The last committed iteration (-1 before the first Commit).
  long long Iteration() const { return cairn_pmem_array_iteration(handle_); }
  // Where this iteration's writes go.
  std::span<T> Working() { return {static_cast<T*>(cairn_pmem_array_working(handle_)), count_}; }
  // The last committed iteration.
  std::span<const T> Consistent() const {
    return {static_cast<const T*>(cairn_pmem_array_consistent(handle_)), count_};
  }
  // The post-update version switch: Consistent() until MarkUpdated(), then
  // Working().
  std::span<const T> Read() const {
    return {static_cast<const T*>(cairn_pmem_array_read(handle_)), count_};
  }
  void MarkUpdated() { (void)cairn_pmem_array_mark_updated(handle_); }
  // With async_flush: the iteration's writes to [first, first + count) are
  // done, flush them now (proactively, on the helper thread).
  Status DoneWriting(size_t first, size_t count) {
    return Status(cairn_pmem_array_done_writing(handle_, first, count));
  }
  // DoneWriting over the whole array.
  Status StartFlush() { return Status(cairn_pmem_array_start_flush(handle_)); }
  Status Commit() { return Status(cairn_pmem_array_commit(handle_)); }
  DualArrayInfo Info() const {
    cairn_pmem_array_info c = CAIRN_PMEM_ARRAY_INFO_INIT;
    DualArrayInfo info;
    if (cairn_pmem_array_get_info(handle_, &c) == CAIRN_SUCCESS) {
      info = {static_cast<Mode>(c.mode), c.is_pmem != 0, c.iteration, c.reason};
    }
    return info;
  }

 private:
  DualArray(cairn_pmem_array* handle, size_t count) : handle_(handle), count_(count) {}
  cairn_pmem_array* handle_;
  size_t count_;
};

// The process's flush helper thread (cairn_flush_init); finalized when it
// goes out of scope.
class FlushHelper {
 public:
  static std::unique_ptr<FlushHelper> Start(Status* status) {
    *status = Status(cairn_flush_init());
    return status->ok() ? std::unique_ptr<FlushHelper>(new FlushHelper()) : nullptr;
  }
  ~FlushHelper() { (void)cairn_flush_finalize(); }
  FlushHelper(const FlushHelper&) = delete;
  FlushHelper& operator=(const FlushHelper&) = delete;

  Status Async(const void* ptr, size_t len) { return Status(cairn_flush_async(ptr, len)); }
  template <typename T>
  Status Async(std::span<const T> range) {
    return Async(range.data(), range.size_bytes());
  }
  Status Barrier() { return Status(cairn_flush_barrier()); }

 private:
  FlushHelper() = default;
};

}  // namespace pmem
}  // namespace v1
}  // namespace cairn

#endif  // CAIRN_PMEM_HPP_
