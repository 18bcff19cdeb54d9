#include "varray/varray.h"

#include <cstring>
#include <random>

#include "base/log.h"

namespace cairn {

const char* VarrayKindName(VarrayKind kind) {
  switch (kind) {
    case VarrayKind::kLogRma: return "log-rma";
    case VarrayKind::kLogMessage: return "log-msg";
    case VarrayKind::kFlat: return "flat";
  }
  return "unknown";
}

namespace {

Status CheckOptions(const VarrayOptions& o) {
  if (o.name.empty() || o.name.size() > 128 || o.name.find('/') != std::string::npos ||
      o.name == "." || o.name == "..") {
    return Error(Code::kInvalidArgument,
                 "varray name '{}' must be 1-128 characters without '/' and not '.' or '..'",
                 o.name);
  }
  if (o.keep == 0) return Error(Code::kInvalidArgument, "varray '{}': keep is 0 (at least 1)", o.name);
  if (o.keep > (uint64_t{1} << 20)) {
    return Error(Code::kInvalidArgument, "varray '{}': keep {} is above 2^20", o.name, o.keep);
  }
  return Status::Ok();
}

// The RMA log where it can run: with compare-and-swap where that is safe;
// with claim words where it is not (kAuto); or, when compare-and-swap was
// asked for and is unsafe, the message protocol, with a warning.
Result<std::unique_ptr<VersionedArray>> CreateLogRma(std::unique_ptr<Comm> comm, Env* env,
                                                     const VarrayOptions& options,
                                                     const Geometry& g) {
  const LogLayout layout = LogLayout::For(g, options.keep, options.log_capacity);
  CAIRN_ASSIGN_OR_RETURN(auto window, NewRmaWindow(*comm, layout.capacity));
  const bool safe = window->compare_and_swap_safe();
  if (options.atomics == VarrayAtomics::kCompareAndSwap && !safe) {
    if (comm->rank() == 0) {
      Log(LogLevel::kWarn,
          "varray '{}': compare-and-swap asked for but unsafe here ({}); using the message "
          "protocol instead",
          options.name, window->compare_and_swap_note());
    }
    window.reset();
    return NewLogMessageArray(std::move(comm), env, options, g);
  }
  const bool use_cas = safe && options.atomics != VarrayAtomics::kFetchAdd;
  if (!safe && comm->rank() == 0) {
    Log(LogLevel::kInfo, "varray '{}': {}; first puts claim blocks with fetch-and-add",
        options.name, window->compare_and_swap_note());
  }
  return NewLogRmaArray(std::move(comm), env, options, g, std::move(window), use_cas);
}

}  // namespace

Result<std::unique_ptr<VersionedArray>> VersionedArray::Create(std::unique_ptr<Comm> comm,
                                                               Env* env,
                                                               const VarrayOptions& options) {
  // Every rank checks the same arguments; they must agree before any rank
  // takes part in the window's collective allocation.
  Result<Geometry> g = Geometry::Make(options.length, options.elem_size, options.block_size,
                                      comm->size());
  Status valid = g.ok() ? CheckOptions(options) : g.status();
  if (g.ok() && valid.ok() && options.log_capacity != 0 && options.kind != VarrayKind::kFlat) {
    const LogLayout l = LogLayout::For(*g, options.keep, options.log_capacity);
    if (l.slots < l.blocks) {
      valid = Error(Code::kInvalidArgument,
                    "varray '{}': log_capacity {} holds {} blocks, fewer than one copy of the "
                    "partition ({} blocks: at least {} bytes)",
                    options.name, options.log_capacity, l.slots, l.blocks,
                    LogLayout::CapacityFor(*g, l.blocks));
    }
  }
  CAIRN_RETURN_IF_ERROR(comm->Agree(valid.Annotate("varray_create")));
  Result<std::unique_ptr<VersionedArray>> array = Status(Code::kInternal, "no implementation");
  switch (options.kind) {
    case VarrayKind::kLogRma: array = CreateLogRma(std::move(comm), env, options, *g); break;
    case VarrayKind::kLogMessage:
      array = NewLogMessageArray(std::move(comm), env, options, *g);
      break;
    case VarrayKind::kFlat: array = NewFlatArray(std::move(comm), env, options, *g); break;
  }
  CAIRN_RETURN_IF_ERROR(array.status());
  CAIRN_RETURN_IF_ERROR((*array)->StartDrain());
  return array;
}

VersionedArray::VersionedArray(std::unique_ptr<Comm> comm, Env* env, const VarrayOptions& options,
                               const Geometry& geometry)
    : comm_(std::move(comm)), env_(env), options_(options), geometry_(geometry) {}

VersionedArray::~VersionedArray() = default;

Status VersionedArray::StartDrain() {
  Status s;
  drain_.reset();
  if (draining()) {
    auto drain = VersionDrain::Start(env_, options_.drain_dir + "/" + options_.name,
                                     comm_->rank(), lineage());
    if (drain.ok()) {
      drain_ = std::move(drain).value();
    } else {
      s = drain.status();
    }
  }
  return comm_->Agree(s.Annotate(fmt::format("varray '{}': drain", options_.name)));
}

Status VersionedArray::CheckRange(const char* what, uint64_t index, uint64_t count,
                                  const void* buffer) const {
  if (closed_) return Error(Code::kInvalidArgument, "varray '{}': {} after close", options_.name, what);
  if (buffer == nullptr && count > 0) {
    return Error(Code::kInvalidArgument, "varray '{}': {} with a NULL buffer", options_.name, what);
  }
  if (index > geometry_.length || count > geometry_.length - index) {
    return Error(Code::kInvalidArgument,
                 "varray '{}': {} of elements [{}, {}) beyond its length {}", options_.name,
                 what, index, index + count, geometry_.length);
  }
  return Status::Ok();
}

Status VersionedArray::Put(uint64_t index, uint64_t count, const void* data) {
  CAIRN_RETURN_IF_ERROR(CheckRange("put", index, count, data));
  const auto* bytes = static_cast<const uint8_t*>(data);
  return geometry_.ForEachPiece(index, count, [&](int rank, uint64_t off, uint64_t at, uint64_t n) {
    return WritePiece(rank, off, {bytes + at, n}, std::nullopt);
  });
}

Status VersionedArray::Acc(uint64_t index, uint64_t count, const void* values, RmaElement type) {
  CAIRN_RETURN_IF_ERROR(CheckRange("acc", index, count, values));
  if (RmaElementSize(type) != geometry_.elem_size) {
    return Error(Code::kInvalidArgument,
                 "varray '{}': acc of {}-byte elements into an array of {}-byte elements",
                 options_.name, RmaElementSize(type), geometry_.elem_size);
  }
  const auto* bytes = static_cast<const uint8_t*>(values);
  return geometry_.ForEachPiece(index, count, [&](int rank, uint64_t off, uint64_t at, uint64_t n) {
    return WritePiece(rank, off, {bytes + at, n}, type);
  });
}

Status VersionedArray::Get(uint64_t index, uint64_t count, void* out) {
  CAIRN_RETURN_IF_ERROR(CheckRange("get", index, count, out));
  auto* bytes = static_cast<uint8_t*>(out);
  return geometry_.ForEachPiece(index, count, [&](int rank, uint64_t off, uint64_t at, uint64_t n) {
    return StartReadPiece(rank, off, {bytes + at, n});
  });
}

Status VersionedArray::Wait() { return FinishReads(); }

Status VersionedArray::GetVersion(int64_t version, uint64_t index, uint64_t count, void* out) {
  CAIRN_RETURN_IF_ERROR(CheckRange("get_version", index, count, out));
  if (version < 0 || version > version_) {
    return Error(Code::kNotFound, "varray '{}': version {} does not exist (the open one is {})",
                 options_.name, version, version_);
  }
  if (version < oldest_ && !drain_) {
    return Error(Code::kNotFound,
                 "varray '{}': version {} is no longer kept (keep = {}: versions {}..{} are in "
                 "memory; set drain_dir to keep older ones on storage)",
                 options_.name, version, options_.keep, oldest_, version_);
  }
  auto* bytes = static_cast<uint8_t*>(out);
  return geometry_.ForEachPiece(index, count, [&](int rank, uint64_t off, uint64_t at, uint64_t n) {
    if (version >= oldest_) return ReadFrozenPiece(rank, version, off, {bytes + at, n});
    return drain_->Read(rank, version, off, {bytes + at, n});
  });
}

template <typename Step>
Status VersionedArray::Collective(const char* what, bool check_versions, bool exclusive,
                                  Step&& step) {
  auto context = [&] { return fmt::format("varray '{}': {}", options_.name, what); };
  Status ready;
  if (closed_) ready = Error(Code::kInvalidArgument, "after close");
  if (ready.ok() && reads_pending()) {
    ready = Error(Code::kInvalidArgument, "gets are outstanding: call wait first");
  }
  // Every access of this rank is complete already (put and acc on return,
  // get at wait, checked above; frozen reads block), in every
  // implementation. The agreement is an allreduce, so once it returns no
  // access to any rank's memory is in flight and the local step may run.
  // It carries whether some rank's step needs the others kept off until
  // it is done.
  std::vector<int64_t>& words = step_words_;
  words = {ready.ok() ? 0 : 1, exclusive ? 1 : 0};  // in place: no allocation per version
  CAIRN_RETURN_IF_ERROR(comm_->AllreduceMax(words));
  // Some rank failed: the agreement names it, on every rank.
  if (words[0] != 0) return comm_->Agree(ready.Annotate(context()));
  Status stepped = step(words[1] != 0);
  if (words[1] != 0) {
    CAIRN_RETURN_IF_ERROR(comm_->Agree(stepped.Annotate(context())));
  } else if (!stepped.ok()) {
    // A step without exclusive access cannot fail (LocalVersionInc).
    return Error(Code::kInternal, "{}: {}", context(), stepped.ToString());
  }
  if (check_versions) return LearnVersions(context());
  // version_inc and restore leave every rank at the same versions.
  version_ = LocalVersion();
  oldest_ = LocalOldest();
  return Status::Ok();
}

// Every rank's part must be at the same versions: always so after
// version_inc and restore, but a reload takes what a restart put back.
Status VersionedArray::LearnVersions(const std::string& context) {
  CAIRN_ASSIGN_OR_RETURN(std::vector<int64_t> all,
                         comm_->AllgatherWords({LocalVersion(), LocalOldest()}));
  for (int r = 1; r < comm_->size(); ++r) {
    if (all[2 * r] != all[0] || all[2 * r + 1] != all[1]) {
      return Error(Code::kCorrupt,
                   "{}: rank {} holds versions {}..{}, rank 0 versions {}..{}", context, r,
                   all[2 * r + 1], all[2 * r], all[1], all[0]);
    }
  }
  version_ = all[0];
  oldest_ = all[1];
  return Status::Ok();
}

Status VersionedArray::VersionInc() {
  // Every rank holds the same version: every rank fails alike, alone.
  if (version_ >= LogLayout::kMaxVersion) {
    return Error(Code::kInvalidArgument, "varray '{}': version_inc past version {}, the last",
                 options_.name, LogLayout::kMaxVersion);
  }
  return Collective("version_inc", false, !closed_ && VersionIncNeedsExclusive(),
                    [&](bool exclusive) { return LocalVersionInc(exclusive); });
}

Status VersionedArray::Restore(int64_t version) {
  return Collective("restore", false, true, [&](bool) -> Status {
    if (version < oldest_ || version >= version_) {
      return Error(Code::kNotFound,
                   "version {} is not a kept frozen version (versions {}..{} are kept in memory)",
                   version, oldest_, version_ - 1);
    }
    return LocalRestore(version);
  });
}

Status VersionedArray::Reload() {
  if (drain_) CAIRN_RETURN_IF_ERROR(WaitDrains());
  CAIRN_RETURN_IF_ERROR(Collective("reload", true, true, [&](bool) { return LocalReload(); }));
  return StartDrain();
}

Status VersionedArray::WaitDrains() {
  Status local = drain_ ? drain_->Wait() : Status::Ok();
  CAIRN_RETURN_IF_ERROR(comm_->Agree(local.Annotate(fmt::format("varray '{}'", options_.name))));
  return comm_->Barrier();
}

Status VersionedArray::Evict(int64_t version, std::vector<uint8_t> bytes) {
  if (drain_) drain_->Submit(version, std::move(bytes));
  return Status::Ok();
}

Status VersionedArray::Close() {
  if (closed_) return Status::Ok();
  Status waited = WaitDrains();
  closed_ = true;
  drain_.reset();
  Status closed = CloseImpl();
  return waited.ok() ? closed : waited;
}

Result<uint64_t> VersionedArray::NewLineage(Comm& comm) {
  std::string word(8, '\0');
  if (comm.rank() == 0) {
    std::random_device device;
    const uint64_t lineage = (uint64_t{device()} << 32) ^ device();
    std::memcpy(word.data(), &lineage, 8);
  }
  CAIRN_RETURN_IF_ERROR(comm.Broadcast(&word, 0));
  uint64_t lineage = 0;
  std::memcpy(&lineage, word.data(), 8);
  return lineage;
}

VarrayStats VersionedArray::stats() const {
  VarrayStats s;
  s.kind = kind();
  s.version = version_;
  s.oldest_in_memory = oldest_;
  s.memory_bytes = memory_bytes();
  s.cleanings = cleanings();
  s.versions_drained = drain_ ? drain_->drained() : 0;
  s.counts = counts();
  s.compare_and_swap = compare_and_swap();
  return s;
}

}  // namespace cairn
