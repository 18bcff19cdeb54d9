#include "varray/version_drain.h"

#include <algorithm>
#include <cstring>

#include "codec/crc32c.h"
#include "format/drained_version.h"

namespace cairn {

Result<std::unique_ptr<VersionDrain>> VersionDrain::Start(Env* env, std::string dir, int rank,
                                                          uint64_t lineage) {
  std::unique_ptr<VersionDrain> drain(new VersionDrain(env, std::move(dir), rank, lineage));
  CAIRN_RETURN_IF_ERROR(env->CreateDirs(drain->dir_ + "/r" + std::to_string(rank)));
  CAIRN_ASSIGN_OR_RETURN(drain->thread_, env->StartThread(ThreadOptions{.name = "cairn-varray"},
                                                                [d = drain.get()] { d->Run(); }));
  return drain;
}

VersionDrain::~VersionDrain() {
  {
    MutexLock lock(&mu_);
    stop_ = true;
    changed_.SignalAll();
  }
  if (thread_) thread_->Join();
}

std::string VersionDrain::PathOf(int rank, int64_t version) const {
  return dir_ + "/r" + std::to_string(rank) + "/v" + std::to_string(version) + ".vad";
}

void VersionDrain::Submit(int64_t version, std::vector<uint8_t> bytes) {
  MutexLock lock(&mu_);
  queue_.push_back({version, std::move(bytes)});
  changed_.SignalAll();
}

Status VersionDrain::Wait() {
  MutexLock lock(&mu_);
  while (!queue_.empty() || busy_) changed_.Wait();
  Status failure = failure_;
  failure_ = Status::Ok();
  return failure;
}

int64_t VersionDrain::drained() const {
  MutexLock lock(&mu_);
  return drained_;
}

void VersionDrain::Run() {
  while (true) {
    Job job;
    {
      MutexLock lock(&mu_);
      while (queue_.empty() && !stop_) changed_.Wait();
      if (queue_.empty()) return;  // stopping, and nothing left to write
      job = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
    }
    Status s = WriteOne(job.version, job.bytes);
    MutexLock lock(&mu_);
    busy_ = false;
    if (s.ok()) ++drained_;
    if (!s.ok() && failure_.ok()) failure_ = s;
    changed_.SignalAll();
  }
}

Status VersionDrain::WriteOne(int64_t version, const std::vector<uint8_t>& bytes) {
  const std::string head = EncodeDrainedHeader(
      {lineage_, version, rank_, bytes.size(), Crc32c(bytes.data(), bytes.size())});
  std::vector<uint8_t> file(head.size() + bytes.size());
  std::memcpy(file.data(), head.data(), head.size());
  if (!bytes.empty()) std::memcpy(file.data() + head.size(), bytes.data(), bytes.size());
  return env_->WriteFileAtomic(PathOf(rank_, version), file.data(), file.size(), /*sync=*/true)
      .Annotate("varray drain");
}

Status VersionDrain::Read(int rank, int64_t version, uint64_t offset,
                          std::span<uint8_t> into) const {
  const std::string path = PathOf(rank, version);
  if (!env_->FileExists(path)) {
    return Error(Code::kNotFound,
                 "version {} of rank {} is not in memory and not drained to {} (drains still "
                 "running finish at cairn_varray_drain_wait)",
                 version, rank, path);
  }
  CAIRN_ASSIGN_OR_RETURN(auto file, env_->NewReadableFile(path));
  std::string head(std::min(file->size(), kDrainedHeaderBytes), '\0');
  CAIRN_RETURN_IF_ERROR(file->ReadAt(0, head.data(), head.size()));
  CAIRN_ASSIGN_OR_RETURN(DrainedHeader h, DecodeDrainedHeader(head, file->size(), path));
  if (h.version != version || h.rank != rank) {
    return Error(Code::kCorrupt, "{}: header does not describe version {} of rank {}", path,
                 version, rank);
  }
  if (h.lineage != lineage_) {
    return Error(Code::kNotFound, "{}: left by another array of the same name, not this one's "
                 "version {}", path, version);
  }
  if (offset > h.bytes || into.size() > h.bytes - offset) {
    return Error(Code::kInvalidArgument, "{}: bytes [{}, {}) beyond its {}", path, offset,
                 offset + into.size(), h.bytes);
  }
  // The whole partition is checked, not only the bytes asked for: a read
  // never returns bytes of a file that fails its checksum.
  std::vector<uint8_t> bytes(h.bytes);
  CAIRN_RETURN_IF_ERROR(file->ReadAt(kDrainedHeaderBytes, bytes.data(), bytes.size()));
  if (Crc32c(bytes.data(), bytes.size()) != h.crc) {
    return Error(Code::kCorrupt, "{}: CRC32C mismatch", path);
  }
  if (!into.empty()) std::memcpy(into.data(), bytes.data() + offset, into.size());
  return Status::Ok();
}

}  // namespace cairn
