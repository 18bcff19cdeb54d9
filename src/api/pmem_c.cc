// The persistent-memory part of the C API (include/cairn/pmem.h): handles
// over pmem::InPlaceArray, and the process's one flush helper thread behind
// cairn_flush_init/async/barrier (like the engine in cairn_c.cc, global
// because the C API's shape has no handle for it). Every entry point runs
// inside the C API's guard (api/guard.h).
#include "cairn/pmem.h"

#include <memory>
#include <string>

#include "api/guard.h"
#include "api/sized_struct.h"
#include "base/mutex.h"
#include "env/env.h"
#include "pmem/async_flusher.h"
#include "pmem/in_place_array.h"

struct cairn_pmem_array {
  std::unique_ptr<cairn::pmem::InPlaceArray> array;
  bool async_flush = false;  // holds a use of the process's flusher
};

namespace cairn {
namespace {

using api::FinishCall;
using api::GuardedCall;

// The helper thread of cairn_flush_init, and how many open arrays flush
// through it (it may not stop under them).
struct FlushHelper {
  Mutex mu;
  std::unique_ptr<pmem::AsyncFlusher> flusher GUARDED_BY(mu);
  int arrays GUARDED_BY(mu) = 0;
};

FlushHelper& TheFlushHelper() {
  static FlushHelper* helper = new FlushHelper();  // never destroyed: usable at exit
  return *helper;
}

Status NotStarted() {
  return Error(Code::kNotInitialized, "no flush helper (call cairn_flush_init first)");
}

Status NullArray() { return Error(Code::kInvalidArgument, "array is NULL"); }

Result<pmem::UpdatePattern> PatternOf(int pattern) {
  switch (pattern) {
    case CAIRN_PMEM_AUTO: return pmem::UpdatePattern::kAuto;
    case CAIRN_PMEM_UNIFORM: return pmem::UpdatePattern::kUniform;
    case CAIRN_PMEM_NONUNIFORM: return pmem::UpdatePattern::kNonUniform;
    default: break;
  }
  return Error(Code::kInvalidArgument,
               "update_pattern {} is none of CAIRN_PMEM_AUTO, _UNIFORM, _NONUNIFORM", pattern);
}

// The options a caller passed, by the struct-size rule: fields beyond its
// size keep their defaults.
Result<cairn_pmem_array_options> ReadOptions(const cairn_pmem_array_options* given) {
  cairn_pmem_array_options options = CAIRN_PMEM_ARRAY_OPTIONS_INIT;
  if (given == nullptr) return options;
  if (given->size < offsetof(cairn_pmem_array_options, update_pattern) + sizeof(int)) {
    return Error(Code::kInvalidArgument,
                 "options->size is {} (initialize the struct with CAIRN_PMEM_ARRAY_OPTIONS_INIT)",
                 given->size);
  }
  options.update_pattern = given->update_pattern;
  if (given->size >= offsetof(cairn_pmem_array_options, async_flush) + sizeof(int)) {
    options.async_flush = given->async_flush;
  }
  return options;
}

Status OpenArray(const char* path, size_t count, size_t elem_size,
                 const cairn_pmem_array_options* given, cairn_pmem_array** out) {
  if (out == nullptr) return Error(Code::kInvalidArgument, "out is NULL");
  *out = nullptr;
  if (path == nullptr || *path == '\0') return Error(Code::kInvalidArgument, "path is NULL or empty");
  CAIRN_ASSIGN_OR_RETURN(cairn_pmem_array_options options, ReadOptions(given));
  CAIRN_ASSIGN_OR_RETURN(pmem::UpdatePattern pattern, PatternOf(options.update_pattern));
  pmem::InPlaceArrayOptions array_options{pattern, nullptr};
  auto handle = std::make_unique<cairn_pmem_array>();
  FlushHelper& helper = TheFlushHelper();
  MutexLock lock(&helper.mu);
  if (options.async_flush != 0) {
    if (!helper.flusher) {
      return Error(Code::kNotInitialized,
                   "'{}' asks for async_flush but no flush helper runs (call cairn_flush_init "
                   "first)",
                   path);
    }
    array_options.flusher = helper.flusher.get();
  }
  CAIRN_ASSIGN_OR_RETURN(handle->array,
                         pmem::InPlaceArray::Open(path, count, elem_size, array_options));
  handle->async_flush = options.async_flush != 0;
  if (handle->async_flush) ++helper.arrays;
  *out = handle.release();
  return Status::Ok();
}

int ModeCode(pmem::PersistMode mode) {
  switch (mode) {
    case pmem::PersistMode::kProfiling: return CAIRN_PMEM_MODE_PROFILING;
    case pmem::PersistMode::kInPlace: return CAIRN_PMEM_MODE_IN_PLACE;
    case pmem::PersistMode::kCopy: return CAIRN_PMEM_MODE_COPY;
  }
  return CAIRN_PMEM_MODE_COPY;
}

Status FillInfo(const cairn_pmem_array* handle, cairn_pmem_array_info* info) {
  if (handle == nullptr) return NullArray().Annotate("cairn_pmem_array_get_info");
  using Info = cairn_pmem_array_info;
  CAIRN_ASSIGN_OR_RETURN(auto w, SizedStructWriter<Info>::Open("cairn_pmem_array_get_info", info,
                                                               &Info::mode));
  const pmem::InPlaceArray& a = *handle->array;
  w.Set(&Info::mode, ModeCode(a.mode()));
  w.Set(&Info::is_pmem, a.is_pmem() ? 1 : 0);
  w.Set(&Info::iteration, a.iteration());
  w.SetText(&Info::reason, a.mode_reason());
  return Status::Ok();
}

}  // namespace
}  // namespace cairn

using cairn::Code;
using cairn::Error;
using cairn::MutexLock;
using cairn::Status;
using cairn::api::FinishCall;
using cairn::api::GuardedCall;

extern "C" {

int cairn_pmem_array_open(const char* path, size_t count, size_t elem_size,
                          const cairn_pmem_array_options* options, cairn_pmem_array** out) {
  return GuardedCall("cairn_pmem_array_open", [&] {
    return FinishCall("cairn_pmem_array_open",
                      cairn::OpenArray(path, count, elem_size, options, out));
  });
}

void cairn_pmem_array_close(cairn_pmem_array** array) {
  (void)GuardedCall("cairn_pmem_array_close", [&] {
    if (array == nullptr || *array == nullptr) return 0;
    std::unique_ptr<cairn_pmem_array> handle(*array);
    *array = nullptr;
    handle->array.reset();  // waits for the flusher to be done with it
    if (handle->async_flush) {
      cairn::FlushHelper& helper = cairn::TheFlushHelper();
      MutexLock lock(&helper.mu);
      --helper.arrays;
    }
    return 0;
  });
}

void* cairn_pmem_array_working(cairn_pmem_array* array) {
  return array != nullptr ? array->array->Working() : nullptr;
}

const void* cairn_pmem_array_consistent(const cairn_pmem_array* array) {
  return array != nullptr ? array->array->Consistent() : nullptr;
}

const void* cairn_pmem_array_read(const cairn_pmem_array* array) {
  return array != nullptr ? array->array->Read() : nullptr;
}

long long cairn_pmem_array_iteration(const cairn_pmem_array* array) {
  return array != nullptr ? array->array->iteration() : -1;
}

int cairn_pmem_array_mark_updated(cairn_pmem_array* array) {
  return GuardedCall("cairn_pmem_array_mark_updated", [&] {
    if (array == nullptr) return FinishCall("cairn_pmem_array_mark_updated", cairn::NullArray());
    array->array->MarkUpdated();
    return 0;
  });
}

int cairn_pmem_array_done_writing(cairn_pmem_array* array, size_t first, size_t count) {
  return GuardedCall("cairn_pmem_array_done_writing", [&] {
    if (array == nullptr) return FinishCall("cairn_pmem_array_done_writing", cairn::NullArray());
    return FinishCall("cairn_pmem_array_done_writing", array->array->DoneWriting(first, count));
  });
}

int cairn_pmem_array_start_flush(cairn_pmem_array* array) {
  return GuardedCall("cairn_pmem_array_start_flush", [&] {
    if (array == nullptr) return FinishCall("cairn_pmem_array_start_flush", cairn::NullArray());
    array->array->StartFlush();
    return 0;
  });
}

int cairn_pmem_array_commit(cairn_pmem_array* array) {
  return GuardedCall("cairn_pmem_array_commit", [&] {
    if (array == nullptr) return FinishCall("cairn_pmem_array_commit", cairn::NullArray());
    return FinishCall("cairn_pmem_array_commit", array->array->Commit());
  });
}

int cairn_pmem_array_get_info(const cairn_pmem_array* array, cairn_pmem_array_info* info) {
  return GuardedCall("cairn_pmem_array_get_info",
                     [&] { return FinishCall(nullptr, cairn::FillInfo(array, info)); });
}

int cairn_flush_init(void) {
  return GuardedCall("cairn_flush_init", [&] {
    cairn::FlushHelper& helper = cairn::TheFlushHelper();
    MutexLock lock(&helper.mu);
    if (helper.flusher) {
      return FinishCall("cairn_flush_init",
                        Error(Code::kAlreadyInitialized, "the flush helper already runs"));
    }
    auto flusher = cairn::pmem::AsyncFlusher::Start(cairn::PosixEnv(), {});
    if (!flusher.ok()) return FinishCall("cairn_flush_init", flusher.status());
    helper.flusher = std::move(flusher).value();
    return 0;
  });
}

int cairn_flush_async(const void* ptr, size_t len) {
  return GuardedCall("cairn_flush_async", [&] {
    cairn::FlushHelper& helper = cairn::TheFlushHelper();
    MutexLock lock(&helper.mu);
    if (!helper.flusher) return FinishCall("cairn_flush_async", cairn::NotStarted());
    if (ptr == nullptr && len > 0) {
      return FinishCall("cairn_flush_async", Error(Code::kInvalidArgument, "ptr is NULL"));
    }
    helper.flusher->Submit(ptr, len);
    return 0;
  });
}

int cairn_flush_barrier(void) {
  return GuardedCall("cairn_flush_barrier", [&] {
    cairn::FlushHelper& helper = cairn::TheFlushHelper();
    MutexLock lock(&helper.mu);
    if (!helper.flusher) return FinishCall("cairn_flush_barrier", cairn::NotStarted());
    helper.flusher->Barrier();
    return 0;
  });
}

int cairn_flush_finalize(void) {
  return GuardedCall("cairn_flush_finalize", [&] {
    cairn::FlushHelper& helper = cairn::TheFlushHelper();
    MutexLock lock(&helper.mu);
    if (!helper.flusher) return FinishCall("cairn_flush_finalize", cairn::NotStarted());
    if (helper.arrays > 0) {
      return FinishCall("cairn_flush_finalize",
                        Error(Code::kInvalidArgument,
                              "{} array(s) opened with async_flush are still open", helper.arrays));
    }
    helper.flusher.reset();  // flushes what is queued, joins the helper
    return 0;
  });
}

}  // extern "C"
