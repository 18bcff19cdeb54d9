// The C API of the versioned arrays (cairn.h, "Multi-version distributed
// arrays"): a handle owns one VersionedArray; every entry point runs in the
// C API's guard (api/guard.h) and reports through this thread's last error.
// The arrays need no engine: only cairn_varray_protect goes through
// cairn_protect, which needs cairn_init.
#include <cstddef>
#include <memory>

#include "api/guard.h"
#include "api/sized_struct.h"
#include "cairn/cairn.h"
#include "comm/mpi_comm.h"
#include "varray/varray.h"

struct cairn_varray_s {
  std::unique_ptr<cairn::VersionedArray> array;
};

namespace cairn {
namespace {

using api::FinishCall;
using api::GuardedCall;

// Whether the caller's options struct (of options->size bytes) holds field.
template <typename Field>
bool Holds(const cairn_varray_options* options, Field cairn_varray_options::*field) {
  const auto offset = reinterpret_cast<const char*>(&(options->*field)) -
                      reinterpret_cast<const char*>(options);
  return static_cast<size_t>(offset) + sizeof(Field) <= options->size;
}

// The caller's options over the defaults: fields beyond its size, and
// zeros, leave the default.
Result<VarrayOptions> ReadOptions(const char* name, unsigned long long length, size_t elem_size,
                                  const cairn_varray_options* in) {
  VarrayOptions o;
  if (name == nullptr) return Error(Code::kInvalidArgument, "name is NULL");
  o.name = name;
  o.length = length;
  o.elem_size = elem_size;
  if (in == nullptr) return o;
  if (in->size < offsetof(cairn_varray_options, kind) + sizeof(in->kind)) {
    return Error(Code::kInvalidArgument,
                 "options->size is {} (initialize the struct with CAIRN_VARRAY_OPTIONS_INIT)",
                 in->size);
  }
  if (Holds(in, &cairn_varray_options::kind)) {
    if (in->kind < CAIRN_VARRAY_LOG_RMA || in->kind > CAIRN_VARRAY_FLAT) {
      return Error(Code::kInvalidArgument, "options->kind {} is not a cairn_varray_kind", in->kind);
    }
    o.kind = static_cast<VarrayKind>(in->kind);
  }
  if (Holds(in, &cairn_varray_options::atomics)) {
    if (in->atomics < CAIRN_VARRAY_ATOMICS_AUTO || in->atomics > CAIRN_VARRAY_ATOMICS_FETCH_ADD) {
      return Error(Code::kInvalidArgument, "options->atomics {} is not a cairn_varray_atomics",
                   in->atomics);
    }
    o.atomics = static_cast<VarrayAtomics>(in->atomics);
  }
  if (Holds(in, &cairn_varray_options::block_size) && in->block_size != 0) {
    o.block_size = in->block_size;
  }
  if (Holds(in, &cairn_varray_options::keep) && in->keep != 0) {
    if (in->keep < 0) return Error(Code::kInvalidArgument, "options->keep is {}", in->keep);
    o.keep = static_cast<uint64_t>(in->keep);
  }
  if (Holds(in, &cairn_varray_options::log_capacity)) o.log_capacity = in->log_capacity;
  if (Holds(in, &cairn_varray_options::drain_dir) && in->drain_dir != nullptr) {
    o.drain_dir = in->drain_dir;
  }
  return o;
}

// Creation shared by the MPI and single-process entry points. make_comm
// runs on every rank whatever the arguments, so that a rank with a bad
// argument still takes part in the collective agreement.
template <typename MakeComm>
int Create(const char* call, const char* name, unsigned long long length, size_t elem_size,
           const cairn_varray_options* options, cairn_varray* out, MakeComm&& make_comm) {
  return GuardedCall(call, [&]() -> int {
    if (out == nullptr) return FinishCall(call, Error(Code::kInvalidArgument, "out is NULL"));
    *out = nullptr;
    Result<std::unique_ptr<Comm>> comm = make_comm();
    if (!comm.ok()) return FinishCall(call, comm.status());
    Result<VarrayOptions> o = ReadOptions(name, length, elem_size, options);
    Status valid = (*comm)->Agree(o.status());
    if (!valid.ok()) return FinishCall(call, valid);
    auto array = VersionedArray::Create(std::move(comm).value(), PosixEnv(), *o);
    if (!array.ok()) return FinishCall(call, array.status());
    *out = new cairn_varray_s{std::move(array).value()};
    return static_cast<int>(CAIRN_SUCCESS);
  });
}

// The entry points on a handle: guarded, NULL refused.
template <typename Fn>
int OnArray(const char* call, cairn_varray va, Fn&& fn) {
  return GuardedCall(call, [&]() -> int {
    if (va == nullptr || !va->array) {
      return FinishCall(call, Error(Code::kInvalidArgument, "the array handle is NULL"));
    }
    return FinishCall(call, fn(*va->array));
  });
}

void FillInfo(const VarrayStats& s, SizedStructWriter<cairn_varray_info>& w) {
  using Info = cairn_varray_info;
  w.Set(&Info::kind, static_cast<int>(s.kind));
  w.Set(&Info::compare_and_swap, s.compare_and_swap ? 1 : 0);
  w.Set(&Info::version, s.version);
  w.Set(&Info::oldest_in_memory, s.oldest_in_memory);
  w.Set(&Info::memory_bytes, s.memory_bytes);
  w.Set(&Info::cleanings, s.cleanings);
  w.Set(&Info::versions_drained, s.versions_drained);
  w.Set(&Info::get_hit, s.counts.get_hit);
  w.Set(&Info::get_miss, s.counts.get_miss);
  w.Set(&Info::put_first, s.counts.put_first);
  w.Set(&Info::put_ow_miss, s.counts.put_ow_miss);
  w.Set(&Info::put_ow_hit, s.counts.put_ow_hit);
}

}  // namespace
}  // namespace cairn

using cairn::Status;
using cairn::VersionedArray;

extern "C" {

int cairn_varray_create(MPI_Comm comm, const char* name, unsigned long long length,
                        size_t elem_size, const cairn_varray_options* options, cairn_varray* out) {
  return cairn::Create("cairn_varray_create", name, length, elem_size, options, out,
                       [&] { return cairn::NewMpiComm(comm, /*ranks_per_node=*/0); });
}

int cairn_varray_create_single(const char* name, unsigned long long length, size_t elem_size,
                               const cairn_varray_options* options, cairn_varray* out) {
  return cairn::Create("cairn_varray_create_single", name, length, elem_size, options, out,
                       [] { return cairn::Result<std::unique_ptr<cairn::Comm>>(cairn::NewSingleComm()); });
}

int cairn_varray_put(cairn_varray va, unsigned long long index, unsigned long long count,
                     const void* data) {
  return cairn::OnArray("cairn_varray_put", va,
                        [&](VersionedArray& a) { return a.Put(index, count, data); });
}

int cairn_varray_get(cairn_varray va, unsigned long long index, unsigned long long count,
                     void* out) {
  return cairn::OnArray("cairn_varray_get", va,
                        [&](VersionedArray& a) { return a.Get(index, count, out); });
}

int cairn_varray_wait(cairn_varray va) {
  return cairn::OnArray("cairn_varray_wait", va, [](VersionedArray& a) { return a.Wait(); });
}

int cairn_varray_acc(cairn_varray va, unsigned long long index, unsigned long long count,
                     const void* values, cairn_varray_type type) {
  return cairn::OnArray("cairn_varray_acc", va, [&](VersionedArray& a) -> Status {
    if (type < CAIRN_VARRAY_INT32 || type > CAIRN_VARRAY_DOUBLE) {
      return cairn::Error(cairn::Code::kInvalidArgument, "type {} is not a cairn_varray_type",
                          static_cast<int>(type));
    }
    return a.Acc(index, count, values, static_cast<cairn::RmaElement>(type));
  });
}

int cairn_varray_get_version(cairn_varray va, long long version, unsigned long long index,
                             unsigned long long count, void* out) {
  return cairn::OnArray("cairn_varray_get_version", va, [&](VersionedArray& a) {
    return a.GetVersion(version, index, count, out);
  });
}

int cairn_varray_version_inc(cairn_varray va) {
  return cairn::OnArray("cairn_varray_version_inc", va,
                        [](VersionedArray& a) { return a.VersionInc(); });
}

int cairn_varray_version(cairn_varray va, long long* version) {
  return cairn::OnArray("cairn_varray_version", va, [&](VersionedArray& a) -> Status {
    if (version == nullptr) return cairn::Error(cairn::Code::kInvalidArgument, "version is NULL");
    *version = a.version();
    return Status::Ok();
  });
}

int cairn_varray_restore(cairn_varray va, long long version) {
  return cairn::OnArray("cairn_varray_restore", va,
                        [&](VersionedArray& a) { return a.Restore(version); });
}

int cairn_varray_protect(cairn_varray va, int id) {
  return cairn::OnArray("cairn_varray_protect", va, [&](VersionedArray& a) -> Status {
    const std::span<uint8_t> state = a.state();
    const int rc = cairn_protect(id, state.data(), state.size(), 1);
    if (rc == CAIRN_SUCCESS) return Status::Ok();
    return Status(static_cast<cairn::Code>(rc), cairn_error_message(CAIRN_LAST_ERROR));
  });
}

int cairn_varray_reload(cairn_varray va) {
  return cairn::OnArray("cairn_varray_reload", va, [](VersionedArray& a) { return a.Reload(); });
}

int cairn_varray_drain_wait(cairn_varray va) {
  return cairn::OnArray("cairn_varray_drain_wait", va,
                        [](VersionedArray& a) { return a.WaitDrains(); });
}

int cairn_varray_info_get(cairn_varray va, cairn_varray_info* info) {
  const char* call = "cairn_varray_info_get";
  return cairn::GuardedCall(call, [&]() -> int {
    if (va == nullptr || !va->array) {
      return cairn::FinishCall(call, cairn::Error(cairn::Code::kInvalidArgument,
                                                  "the array handle is NULL"));
    }
    // Open's message names the call already.
    auto writer =
        cairn::SizedStructWriter<cairn_varray_info>::Open(call, info, &cairn_varray_info::kind);
    if (!writer.ok()) return cairn::FinishCall(nullptr, writer.status());
    cairn::FillInfo(va->array->stats(), *writer);
    return static_cast<int>(CAIRN_SUCCESS);
  });
}

int cairn_varray_destroy(cairn_varray* va) {
  return cairn::GuardedCall("cairn_varray_destroy", [&]() -> int {
    if (va == nullptr || *va == nullptr) return static_cast<int>(CAIRN_SUCCESS);
    std::unique_ptr<cairn_varray_s> owned(*va);
    *va = nullptr;
    return cairn::FinishCall("cairn_varray_destroy", owned->array->Close());
  });
}

}  // extern "C"
