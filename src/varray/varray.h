// VersionedArray: a multi-version distributed array (GVR's global array,
// docs/varray.md). L elements of elem_size bytes spread uniformly over the
// ranks of a communicator; any rank puts, gets and accumulates any range;
// the collective VersionInc freezes the current contents as a version that
// stays readable (GetVersion) until `keep` newer versions exist, and can
// then go to a storage directory (drain_dir) and be read back from there;
// Restore rolls the current contents back to a kept version. Three
// implementations, chosen at Create:
//   kLogRma      the log-structured array over MPI-3 RMA (paper §III-D1)
//   kLogMessage  the same log, each operation done by the owner's server
//                thread at a client's request (§III-D2)
//   kFlat        a plain array copied whole at each VersionInc (baseline)
// Consistency: a put or acc is complete when it returns; a get fills its
// buffer at Wait. Conflicting accesses of two ranks in one version are
// unordered (any interleaving; acc's sums are atomic per element); every
// access before a VersionInc is in the version it freezes.
// Errors are Status with the cause (the index, version, rank); collective
// calls return the same error on every rank (Comm::Agree).
// Thread-safety: one thread per array (the one that may call MPI).
#ifndef CAIRN_VARRAY_VARRAY_H_
#define CAIRN_VARRAY_VARRAY_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "base/status.h"
#include "comm/comm.h"
#include "comm/rma_window.h"
#include "env/env.h"
#include "varray/geometry.h"
#include "varray/log_client.h"
#include "varray/version_drain.h"

namespace cairn {

enum class VarrayKind { kLogRma = 0, kLogMessage = 1, kFlat = 2 };
const char* VarrayKindName(VarrayKind kind);

// How the RMA log publishes a first put: compare-and-swap as in the paper,
// or a claim word per block taken with fetch-and-add. kAuto takes
// compare-and-swap where it is safe (rma_window.h); kCompareAndSwap where
// it is not falls back to the message protocol with a warning.
enum class VarrayAtomics { kAuto = 0, kCompareAndSwap = 1, kFetchAdd = 2 };

struct VarrayOptions {
  std::string name = "varray";  // names drained files and messages
  uint64_t length = 0;          // elements
  uint64_t elem_size = 0;       // bytes per element
  uint64_t block_size = 4096;   // bytes per log block, a multiple of elem_size and 8
  VarrayKind kind = VarrayKind::kLogRma;
  VarrayAtomics atomics = VarrayAtomics::kAuto;
  uint64_t keep = 8;            // frozen versions kept in memory (>= 1)
  uint64_t log_capacity = 0;    // bytes per rank for the log (0: LogLayout::DefaultCapacity)
  std::string drain_dir;        // "" keeps no version beyond keep
};

struct VarrayStats {
  VarrayKind kind = VarrayKind::kLogRma;  // the implementation in use
  bool compare_and_swap = false;          // the RMA log publishes with compare-and-swap
  int64_t version = 0;                    // the open version
  int64_t oldest_in_memory = 0;
  uint64_t memory_bytes = 0;              // this rank's bytes holding the array's versions
  uint64_t cleanings = 0;                 // log cleanings on this rank
  int64_t versions_drained = 0;           // by this rank
  LogAccessCounts counts;                 // this rank's accesses as a client
};

class VersionedArray {
 public:
  // Collective over comm (which the array keeps). kInvalidArgument naming
  // a bad option; kUnsupported when the implementation cannot run here.
  static Result<std::unique_ptr<VersionedArray>> Create(std::unique_ptr<Comm> comm, Env* env,
                                                        const VarrayOptions& options);
  virtual ~VersionedArray();

  // Elements [index, index + count) of the current version. data holds
  // count * elem_size bytes. Complete on return.
  Status Put(uint64_t index, uint64_t count, const void* data);
  // Adds values (count elements of `type`, whose size is elem_size).
  Status Acc(uint64_t index, uint64_t count, const void* values, RmaElement type);
  // Non-blocking: out (count * elem_size bytes) is filled at Wait.
  Status Get(uint64_t index, uint64_t count, void* out);
  // Completes every Get of this rank.
  Status Wait();
  // Reads a frozen version (or the open one); blocking. kNotFound when the
  // version is neither kept in memory nor drained.
  Status GetVersion(int64_t version, uint64_t index, uint64_t count, void* out);

  // Collective: freezes the open version, opens the next.
  Status VersionInc();
  // Collective: the open version's contents become those of `version`.
  Status Restore(int64_t version);
  // Collective: after state() was refilled by a checkpoint restart, takes
  // the restored log as the array's (kCorrupt if it is not one of this
  // shape).
  Status Reload();
  // Collective: waits until every rank's drained versions are on storage.
  Status WaitDrains();
  // Collective: waits for drains, stops servers, frees windows. The
  // destructor does it (ignoring errors) if Close was not called; calls
  // other than stats() are errors afterwards.
  Status Close();

  int64_t version() const { return version_; }
  const Geometry& geometry() const { return geometry_; }
  // This rank's memory that holds every in-memory version (for checkpoints:
  // protect it, and call Reload after a restart refilled it).
  virtual std::span<uint8_t> state() = 0;
  VarrayStats stats() const;

 protected:
  VersionedArray(std::unique_ptr<Comm> comm, Env* env, const VarrayOptions& options,
                 const Geometry& geometry);

  // The implementations' parts. Pieces are one rank's bytes.
  virtual Status WritePiece(int rank, uint64_t offset, std::span<const uint8_t> data,
                            std::optional<RmaElement> acc) = 0;
  virtual Status StartReadPiece(int rank, uint64_t offset, std::span<uint8_t> into) = 0;
  virtual Status FinishReads() = 0;
  virtual bool reads_pending() const = 0;
  virtual Status ReadFrozenPiece(int rank, int64_t version, uint64_t offset,
                                 std::span<uint8_t> into) = 0;
  // Whether this rank's next LocalVersionInc touches memory other ranks
  // access (then every rank waits until all are done before accessing
  // the array again); if no rank's does, version_inc is one agreement.
  virtual bool VersionIncNeedsExclusive() const = 0;
  // Local steps, run by every rank once every rank completed its accesses.
  // exclusive: no rank accesses the array until every rank's step is done
  // (always so for restore and reload). A step run without it must not
  // fail and must touch nothing other ranks access.
  virtual Status LocalVersionInc(bool exclusive) = 0;
  virtual Status LocalRestore(int64_t version) = 0;
  virtual Status LocalReload() = 0;
  virtual int64_t LocalVersion() const = 0;
  virtual int64_t LocalOldest() const = 0;
  virtual uint64_t lineage() const = 0;
  virtual uint64_t memory_bytes() const = 0;
  virtual uint64_t cleanings() const { return 0; }
  virtual LogAccessCounts counts() const { return {}; }
  virtual bool compare_and_swap() const { return false; }
  virtual VarrayKind kind() const = 0;
  // Frees what the implementation holds (collective). Each implementation's
  // destructor calls Close(), since the base's cannot reach CloseImpl.
  virtual Status CloseImpl() = 0;

  // Collective: learns the version numbers from the implementation (and
  // checks that every rank has the same); Create's factories end with it.
  Status Start() { return LearnVersions(fmt::format("varray '{}'", options_.name)); }
  // Collective: a random identity for a new array, the same on every rank.
  static Result<uint64_t> NewLineage(Comm& comm);

  // For LocalVersionInc: a version leaving memory; drains `bytes` (this
  // rank's partition of it) when draining is on.
  Status Evict(int64_t version, std::vector<uint8_t> bytes);
  bool draining() const { return !options_.drain_dir.empty(); }
  // Starts the drain (after the lineage is known). Collective.
  Status StartDrain();

  Comm& comm() { return *comm_; }
  Env* env() const { return env_; }
  const VarrayOptions& options() const { return options_; }
  uint64_t local_bytes() const { return geometry_.local_bytes(comm_->rank()); }

 private:
  Status CheckRange(const char* what, uint64_t index, uint64_t count, const void* buffer) const;
  // Runs a collective local step: agree (on success and
  // on whether any rank needs exclusive access), step, agree again when
  // exclusive, learn the versions (checked over ranks if check_versions).
  template <typename Step>
  Status Collective(const char* what, bool check_versions, bool exclusive, Step&& step);
  Status LearnVersions(const std::string& context);

  std::unique_ptr<Comm> comm_;
  Env* env_;
  VarrayOptions options_;
  Geometry geometry_;
  int64_t version_ = 0;
  int64_t oldest_ = 0;
  std::unique_ptr<VersionDrain> drain_;
  bool closed_ = false;
  std::vector<int64_t> step_words_ = std::vector<int64_t>(2);  // Collective's allreduce
};

// The implementations' factories (log_rma_array.cc, log_msg_array.cc,
// flat_array.cc); Create picks one. Collective.
Result<std::unique_ptr<VersionedArray>> NewLogRmaArray(std::unique_ptr<Comm> comm, Env* env,
                                                       const VarrayOptions& options,
                                                       const Geometry& geometry,
                                                       std::unique_ptr<RmaWindow> window,
                                                       bool use_cas);
Result<std::unique_ptr<VersionedArray>> NewLogMessageArray(std::unique_ptr<Comm> comm, Env* env,
                                                           const VarrayOptions& options,
                                                           const Geometry& geometry);
Result<std::unique_ptr<VersionedArray>> NewFlatArray(std::unique_ptr<Comm> comm, Env* env,
                                                     const VarrayOptions& options,
                                                     const Geometry& geometry);

}  // namespace cairn

#endif  // CAIRN_VARRAY_VARRAY_H_
