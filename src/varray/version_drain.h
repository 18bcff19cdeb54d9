// VersionDrain: moves versions that leave a varray's memory (beyond keep)
// to a directory on a Cairn storage tier, in the background, and reads
// them back (the paper's §III-D1d flushing of old versions, and its
// future work of persisting many versions). Each rank drains its own
// partition of each version into one file,
//   <dir>/<array name>/r<rank>/v<version>.vad
// written through the commit protocol (temporary name, fsync, rename):
// a 48-byte header (magic, lineage, version, rank, bytes, CRC32C of the
// bytes) and the partition's bytes (docs/format.md). The lineage is the
// array's identity, kept in its log: a restarted job whose array was
// restored from a checkpoint reads the files its earlier run drained,
// while a new array of the same name never reads them.
// Any rank reads any rank's file, so `dir` must be visible to all ranks
// (a pfs tier, or a node-local tier when the job has one node).
// Thread-safety: Submit, Wait and Read from the application thread; the
// writes run on the drain's own thread.
#ifndef CAIRN_VARRAY_VERSION_DRAIN_H_
#define CAIRN_VARRAY_VERSION_DRAIN_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "env/env.h"

namespace cairn {

class VersionDrain {
 public:
  // Starts the drain thread. env outlives the drain.
  static Result<std::unique_ptr<VersionDrain>> Start(Env* env, std::string dir, int rank,
                                                     uint64_t lineage);
  // Waits for the queued writes, then stops the thread.
  ~VersionDrain();

  // Queues this rank's bytes of `version` for writing; returns at once.
  void Submit(int64_t version, std::vector<uint8_t> bytes);
  // Blocks until every queued write is done; the first write that failed
  // since the last Wait (kIo naming the file), else ok.
  Status Wait();
  // Reads [offset, offset + into.size()) of rank's drained `version`,
  // checking its header and CRC32C. kNotFound when that file is missing
  // or of another lineage (not drained, or still being written: Wait on
  // every rank first), kCorrupt when it fails its checks.
  Status Read(int rank, int64_t version, uint64_t offset, std::span<uint8_t> into) const;

  std::string PathOf(int rank, int64_t version) const;
  int64_t drained() const;

 private:
  VersionDrain(Env* env, std::string dir, int rank, uint64_t lineage)
      : env_(env), dir_(std::move(dir)), rank_(rank), lineage_(lineage) {}
  void Run();
  Status WriteOne(int64_t version, const std::vector<uint8_t>& bytes);

  struct Job {
    int64_t version;
    std::vector<uint8_t> bytes;
  };

  Env* env_;
  std::string dir_;
  int rank_;
  uint64_t lineage_;
  std::unique_ptr<Thread> thread_;
  mutable Mutex mu_;
  CondVar changed_{&mu_};
  std::deque<Job> queue_ GUARDED_BY(mu_);
  bool busy_ GUARDED_BY(mu_) = false;
  bool stop_ GUARDED_BY(mu_) = false;
  Status failure_ GUARDED_BY(mu_);
  int64_t drained_ GUARDED_BY(mu_) = 0;
};

}  // namespace cairn

#endif  // CAIRN_VARRAY_VERSION_DRAIN_H_
