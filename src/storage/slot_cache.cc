#include "storage/slot_cache.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string_view>

#include "base/log.h"

namespace cairn {
namespace {

// Slots are faulted in by pieces of this size, the request checked between
// them, so that a superseded slot stops within milliseconds.
constexpr uint64_t kFaultPiece = 16 << 20;

// Appends sequentially into the first `length` bytes of a mapping (the
// file's length at most; the mapping may be longer), as `writes` says
// (memory tier: memcpy, nothing to sync on tmpfs).
class MappedWritableFile final : public WritableFile {
 public:
  MappedWritableFile(std::shared_ptr<MappedFile> map, uint64_t length, std::string path,
                     MappedWrites writes)
      : map_(std::move(map)), length_(length), path_(std::move(path)), writes_(std::move(writes)) {}
  Status Append(const void* data, size_t n) override {
    if (n > length_ - pos_) {
      return Error(Code::kInternal, "'{}': write beyond its reserved {} bytes", path_, length_);
    }
    if (writes_.copy != nullptr) {
      writes_.copy(map_->data() + pos_, data, n);
    } else {
      std::memcpy(map_->data() + pos_, data, n);
    }
    pos_ += n;
    return Status::Ok();
  }
  // Only where memcpy is the copy: pmem's streaming copy and persistence
  // must see every byte, so its bytes go through Append.
  uint8_t* Claim(size_t n) override {
    uint8_t* claimed = Peek(n);
    if (claimed != nullptr) pos_ += n;
    return claimed;
  }
  uint8_t* Peek(size_t n) override {
    if (writes_.copy != nullptr || n > length_ - pos_) return nullptr;
    return map_->data() + pos_;
  }
  Status Sync() override { return writes_.persist ? writes_.persist(*map_) : Status::Ok(); }
  // The file ends where the writing ended, as a file written through a
  // descriptor does: it was created as long as it could grow.
  Status Close() override {
    if (pos_ == length_) return Status::Ok();
    CAIRN_RETURN_IF_ERROR(map_->SetLength(pos_).Annotate(path_));
    length_ = pos_;
    return Status::Ok();
  }
  const std::string& path() const override { return path_; }

 private:
  std::shared_ptr<MappedFile> map_;
  uint64_t length_;
  std::string path_;
  MappedWrites writes_;
  uint64_t pos_ = 0;
};

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Whether rest (a name without its owner prefix) is "slot<pid>.<n>" or
// "reserving<pid>.<n>", as NewNameLocked makes them.
bool IsSlotSuffix(std::string_view rest) {
  for (std::string_view kind : {std::string_view("slot"), std::string_view("reserving")}) {
    if (rest.substr(0, kind.size()) != kind) continue;
    std::string_view numbers = rest.substr(kind.size());
    size_t dot = numbers.find('.');
    return dot != std::string_view::npos && AllDigits(numbers.substr(0, dot)) &&
           AllDigits(numbers.substr(dot + 1));
  }
  return false;
}

}  // namespace

SlotCache::SlotCache(Env* env, std::string free_dir, std::string owner, int max_free, bool mapped,
                     const WriteOptions& file_options, RoomCheck room,
                     ThreadOptions reserver)
    : env_(env), reserver_(std::move(reserver)), free_dir_(std::move(free_dir)), owner_(std::move(owner)), max_free_(max_free),
      mapped_mode_(mapped), file_options_(file_options), room_(std::move(room)) {}

void SlotCache::SetMappedWrites(MappedWrites writes) {
  MutexLock lock(&mu_);
  writes_ = std::move(writes);
}

SlotCache::~SlotCache() {
  std::unique_ptr<Thread> thread;
  {
    MutexLock lock(&mu_);
    stopping_ = true;
    ++generation_;
    changed_.SignalAll();
    thread = std::move(thread_);
  }
  if (thread) thread->Join();
  MutexLock lock(&mu_);
  while (TrimOneLocked()) {
  }
}

bool SlotCache::MappedAt(const std::string& path, uint64_t size) const {
  auto it = mapped_.find(path);
  return it != mapped_.end() && it->second->size() == size;
}

bool SlotCache::IsOwnSlot(const std::string& name) const {
  return name.compare(0, owner_.size(), owner_) == 0 &&
         IsSlotSuffix(std::string_view(name).substr(owner_.size()));
}

bool SlotCache::IsTrustedSlot(const std::string& name) {
  if (!IsOwnSlot(name)) return false;
  Status trusted = env_->CheckPrivateFile(JoinPath(free_dir_, name));
  if (!trusted.ok()) {
    Log(LogLevel::kWarn, "parked slot not reused: {}", trusted.ToString());
    return false;
  }
  return true;
}

std::string SlotCache::ChooseParkedLocked(uint64_t size) {
  // The directory itself must be ours before anything in it is trusted.
  if (!env_->CheckPrivateDir(free_dir_).ok()) return "";
  auto entries = env_->ListDir(free_dir_);
  if (!entries.ok()) return "";
  // The best slot is one mapped here at this size, else (for a file of a
  // size no reservation makes: a deduplicated pages file, sized by its
  // plan, or a plain part among pages-file slots) the smallest mapped here
  // that holds it: the pages stay mapped, only the file's length changes.
  // Among equals, the one whose file is nearest that long: cutting a file
  // frees its pages past the new end and growing one faults them in again
  // (0.02 s per 48 MiB here), so a short pages file takes the slot of a
  // short one and a long one the slot of a long one.
  const bool size_reserved = wanted_.count(size) > 0;
  std::string best;
  uint64_t best_mapped = 0;
  uint64_t best_change = 0;
  std::string fallback;
  for (const auto& e : *entries) {
    if (e.is_dir || !IsTrustedSlot(e.name)) continue;
    std::string path = JoinPath(free_dir_, e.name);
    if (path == making_) continue;
    auto mapped = mapped_.find(path);
    if (mapped != mapped_.end()) {
      const uint64_t mapped_size = mapped->second->size();
      if (mapped_size == size || (!size_reserved && mapped_size > size)) {
        Result<uint64_t> length = env_->FileSize(path);
        const uint64_t change =
            !length.ok() ? size : (*length > size ? *length - size : size - *length);
        if (best.empty() || mapped_size < best_mapped ||
            (mapped_size == best_mapped && change < best_change)) {
          best = path;
          best_mapped = mapped_size;
          best_change = change;
        }
      }
      // A slot mapped here at another size that is still wanted (a part's
      // while a sidecar is made, or the reverse) is kept for its own kind:
      // taking it would resize it and make the next file of that kind fresh.
      if (wanted_.count(mapped_size)) continue;
    }
    if (fallback.empty()) fallback = path;
  }
  return best.empty() ? fallback : best;
}

bool SlotCache::SlotOfSizeComingLocked(uint64_t size) {
  if (reserving_ && wanted_.count(size) && !stopping_) return true;
  std::string parked = ChooseParkedLocked(size);
  return !parked.empty() && MappedAt(parked, size);
}

std::string SlotCache::NewNameLocked(const char* kind) {
  return JoinPath(free_dir_, owner_ + kind + std::to_string(::getpid()) + "." +
                                 std::to_string(next_slot_++));
}

Result<std::unique_ptr<WritableFile>> SlotCache::Create(const std::string& path, uint64_t size) {
  MutexLock lock(&mu_);
  std::string slot = ChooseParkedLocked(size);
  // A slot of this size being made is worth waiting for: writing a fresh
  // file instead would allocate the same pages beside it.
  while (mapped_mode_ && !MappedAt(slot, size) && reserving_ && wanted_.count(size) &&
         !stopping_ && paused_ == 0) {
    changed_.Wait();
    slot = ChooseParkedLocked(size);
  }
  if (!mapped_mode_) {
    WriteOptions options = file_options_;
    options.expected_size = size;
    options.reuse_existing = !slot.empty() && env_->RenameFile(slot, path).ok();
    return env_->NewWritableFile(path, options);
  }
  return OpenMappedLocked(slot, path, size);
}

Result<std::unique_ptr<WritableFile>> SlotCache::OpenMappedLocked(const std::string& slot,
                                                                  const std::string& path,
                                                                  uint64_t size) {
  std::shared_ptr<MappedFile> map;
  if (!slot.empty() && env_->RenameFile(slot, path).ok()) {
    auto it = mapped_.find(slot);
    if (it != mapped_.end()) {
      // The file may be shorter or longer than this one (it held a file of
      // another size last time).
      if (it->second->size() >= size && it->second->SetLength(size).ok()) map = it->second;
      mapped_.erase(it);
    }
  } else if (!slot.empty()) {
    mapped_.erase(slot);  // someone else removed it
  }
  if (!map) {
    // A new file or a slot of another size: (re)map it, as long as the
    // slots the reservation makes where it is shorter (a plain part among
    // pages files, with [dedup]), so that once parked it serves any file
    // the others do instead of being mapped afresh.
    auto slot_size = wanted_.lower_bound(size);
    const uint64_t map_bytes = slot_size != wanted_.end() ? slot_size->first : size;
    CAIRN_ASSIGN_OR_RETURN(auto fresh, env_->MapFile(path, map_bytes, /*writable=*/true));
    if (map_bytes != size) CAIRN_RETURN_IF_ERROR(fresh->SetLength(size));
    map = std::shared_ptr<MappedFile>(std::move(fresh));
  }
  mapped_[path] = map;
  return std::unique_ptr<WritableFile>(new MappedWritableFile(map, size, path, writes_));
}

uint64_t SlotCache::GrowthOfCreate(uint64_t size) {
  MutexLock lock(&mu_);
  if (SlotOfSizeComingLocked(size)) return 0;
  std::string parked = ChooseParkedLocked(size);
  if (parked.empty()) return size;
  auto have = env_->FileSize(parked);
  return have.ok() && *have < size ? size - *have : (have.ok() ? 0 : size);
}

void SlotCache::Renamed(const std::string& from, const std::string& to) {
  MutexLock lock(&mu_);
  auto it = mapped_.find(from);
  if (it == mapped_.end()) return;
  mapped_[to] = it->second;
  mapped_.erase(it);
}

int SlotCache::ParkedLocked() {
  int parked = 0;
  if (auto entries = env_->ListDir(free_dir_); entries.ok()) {
    for (const auto& e : *entries) {
      parked += IsOwnSlot(e.name) && JoinPath(free_dir_, e.name) != making_;
    }
  }
  return parked;
}

Status SlotCache::Retire(const std::string& path) {
  MutexLock lock(&mu_);
  // A file beyond max_free is parked too, and the background thread
  // deletes it (TrimOneLocked), off the caller's path: freeing a 256 MiB
  // file took 0.04 s of system time on tmpfs and 0.4-0.56 s on ext4, on
  // the checkpoint that retired it (the first of a run that found newer
  // versions of an earlier run, which it supersedes, on every tier).
  const bool over = ParkedLocked() >= max_free_;
  const bool trim_later = over && StartThreadLocked("old slot files are deleted in the call");
  if ((!over || trim_later) && CreateFreeDir().ok()) {
    std::string slot = NewNameLocked("slot");
    if (env_->RenameFile(path, slot).ok()) {
      auto it = mapped_.find(path);
      if (it != mapped_.end()) {
        mapped_[slot] = it->second;
        mapped_.erase(it);
      }
      if (trim_later) {
        reserving_ = true;  // WaitReserved waits for the trim too
        changed_.SignalAll();
      }
      return Status::Ok();
    }
  }
  mapped_.erase(path);
  return env_->DeleteFile(path);
}

bool SlotCache::TrimOneLocked() {
  if (ParkedLocked() <= max_free_) return false;
  // Only files not mapped here: those mapped are the reservation's, which
  // keeps no more of them than it wants.
  auto entries = env_->ListDir(free_dir_);
  if (!entries.ok()) return false;
  for (const auto& e : *entries) {
    std::string path = JoinPath(free_dir_, e.name);
    if (e.is_dir || !IsOwnSlot(e.name) || path == making_ || mapped_.count(path)) continue;
    // Marked as being made, so that no one takes it meanwhile.
    making_ = path;
    mu_.Unlock();
    (void)env_->DeleteFile(path);
    mu_.Lock();
    making_.clear();
    changed_.SignalAll();
    return true;
  }
  return false;
}

Status SlotCache::CreateFreeDir() {
  CAIRN_RETURN_IF_ERROR(env_->CreateDirs(free_dir_));
  return env_->CheckPrivateDir(free_dir_);
}

void SlotCache::Forget(const std::string& path) {
  MutexLock lock(&mu_);
  mapped_.erase(path);
}

// ---- reservation

void SlotCache::Reserve(const std::vector<uint64_t>& sizes, int count) {
  MutexLock lock(&mu_);
  if (!mapped_mode_ || stopping_) return;
  std::map<uint64_t, int> wanted;
  for (uint64_t size : sizes) wanted[size] = count;
  // A slot being made at a size no longer wanted stops.
  if (!std::equal(wanted.begin(), wanted.end(), wanted_.begin(), wanted_.end(),
                  [](const auto& a, const auto& b) { return a.first == b.first; })) {
    ++generation_;
  }
  wanted_ = std::move(wanted);
  // Without the thread, checkpoints still work, through fresh files.
  reserving_ = StartThreadLocked("memory tier slots are not reserved ahead");
  changed_.SignalAll();
}

bool SlotCache::StartThreadLocked(const char* without_it) {
  if (thread_) return true;
  auto thread = env_->StartThread(reserver_, [this] { ReserveLoop(); });
  if (!thread.ok()) {
    Log(LogLevel::kWarn, "{}: {}", without_it, thread.status().ToString());
    return false;
  }
  thread_ = std::move(thread).value();
  return true;
}

void SlotCache::WaitReserved() {
  MutexLock lock(&mu_);
  while (reserving_ && !stopping_) changed_.Wait();
}

void SlotCache::Pause() {
  MutexLock lock(&mu_);
  ++paused_;
}

void SlotCache::Resume() {
  MutexLock lock(&mu_);
  if (paused_ > 0 && --paused_ == 0) changed_.SignalAll();
}

void SlotCache::HoldDeletions() {
  MutexLock lock(&mu_);
  ++deletions_held_;
}

void SlotCache::ReleaseDeletions() {
  MutexLock lock(&mu_);
  if (deletions_held_ > 0 && --deletions_held_ == 0 && thread_ != nullptr) {
    reserving_ = true;  // WaitReserved waits for what was held
    changed_.SignalAll();
  }
}

void SlotCache::UnmapLater(std::unique_ptr<MappedFile> map) {
  {
    MutexLock lock(&mu_);
    if (thread_ != nullptr && !stopping_) {
      to_unmap_.push_back(std::move(map));
      changed_.SignalAll();
      return;
    }
  }
  map.reset();  // no thread: unmapped now, without the lock
}

void SlotCache::WaitWhilePaused(const SlotJob& job) {
  MutexLock lock(&mu_);
  while (paused_ > 0 && !stopping_ && generation_.load() == job.generation) changed_.Wait();
}

uint64_t SlotCache::ReleaseParked() {
  MutexLock lock(&mu_);
  wanted_.clear();
  reserving_ = false;
  ++generation_;
  changed_.SignalAll();
  // The slot being made stops within a piece and is deleted by its maker.
  while (!making_.empty()) changed_.Wait();
  uint64_t released = 0;
  auto entries = env_->ListDir(free_dir_);
  if (!entries.ok()) return 0;
  for (const auto& e : *entries) {
    if (e.is_dir || !IsOwnSlot(e.name)) continue;
    std::string path = JoinPath(free_dir_, e.name);
    auto size = env_->FileSize(path);
    mapped_.erase(path);
    if (env_->DeleteFile(path).ok() && size.ok()) released += *size;
  }
  return released;
}

void SlotCache::ReserveLoop() {
  mu_.Lock();
  while (!stopping_) {
    if (paused_ > 0) {
      changed_.Wait();  // the request stands; Resume signals
      continue;
    }
    const bool deleting = deletions_held_ == 0;
    if (deleting && !to_unmap_.empty()) {
      std::vector<std::unique_ptr<MappedFile>> maps = std::move(to_unmap_);
      to_unmap_.clear();
      mu_.Unlock();
      maps.clear();
      mu_.Lock();
      continue;
    }
    if (deleting && TrimOneLocked()) continue;
    std::optional<SlotJob> job = reserving_ ? NextJobLocked() : std::nullopt;
    if (!job) {
      if (reserving_) {
        reserving_ = false;  // the request is met
        changed_.SignalAll();
      }
      changed_.Wait();
      continue;
    }
    mu_.Unlock();
    std::shared_ptr<MappedFile> map = MakeSlot(*job);
    mu_.Lock();
    if (!map) {
      // No room, or the file system refused: later checkpoints use what
      // exists and make fresh files for the rest.
      (void)env_->DeleteFile(job->making);
      making_.clear();
      reserving_ = false;
      changed_.SignalAll();
      continue;
    }
    PublishLocked(*job, std::move(map));
  }
  mu_.Unlock();
}

std::optional<SlotCache::SlotJob> SlotCache::NextJobLocked() {
  // The first size (smallest first) with fewer slots than wanted.
  uint64_t size = 0;
  for (const auto& [wanted_size, count] : wanted_) {
    int have = 0;
    for (const auto& [path, map] : mapped_) have += map->size() == wanted_size;
    if (have < count) {
      size = wanted_size;
      break;
    }
  }
  if (size == 0 || !CreateFreeDir().ok()) return std::nullopt;
  SlotJob job;
  job.size = size;
  job.generation = generation_;
  job.making = NewNameLocked("reserving");
  // A parked file not mapped here at the wanted size (another size, or
  // left by an earlier process) is resized rather than a new one made.
  std::string parked = ChooseParkedLocked(size);
  uint64_t had = 0;
  if (!parked.empty() && !MappedAt(parked, size)) {
    auto size = env_->FileSize(parked);
    if (size.ok() && env_->RenameFile(parked, job.making).ok()) {
      job.from = parked;
      had = *size;
      mapped_.erase(parked);
    }
  }
  job.growth = job.size > had ? job.size - had : 0;
  making_ = job.making;
  return job;
}

std::shared_ptr<MappedFile> SlotCache::MakeSlot(const SlotJob& job) {
  if (job.growth > 0 && room_ && !room_(job.growth)) {
    Log(LogLevel::kInfo, "memory tier full: no more slots of {} bytes reserved ahead", job.size);
    return nullptr;
  }
  auto mapped = env_->MapFile(job.making, job.size, /*writable=*/true);
  if (!mapped.ok()) {
    Log(LogLevel::kInfo, "slot not reserved: {}", mapped.status().ToString());
    return nullptr;
  }
  std::shared_ptr<MappedFile> map(std::move(mapped).value());
  // Allocating each page and entering it in this mapping's page table now
  // spares the checkpoint's copy a fault per page; in pieces, so that a
  // request that changed stops it early.
  for (uint64_t piece = 0; piece < job.size; piece += kFaultPiece) {
    WaitWhilePaused(job);
    if (generation_.load() != job.generation) break;
    Status populated = map->Populate(piece, std::min(kFaultPiece, job.size - piece));
    if (!populated.ok()) {
      // The checkpoint's copy faults the rest in itself.
      Log(LogLevel::kInfo, "slot '{}' not faulted in ahead: {}", job.making, populated.ToString());
      break;
    }
  }
  return map;
}

void SlotCache::PublishLocked(const SlotJob& job, std::shared_ptr<MappedFile> map) {
  making_.clear();
  changed_.SignalAll();
  if (job.generation != generation_ && wanted_.empty()) {
    (void)env_->DeleteFile(job.making);  // released meanwhile
    return;
  }
  // Also when superseded by a request of another size: a parked slot of
  // the old size is resized by the next job, faster than made anew.
  std::string slot = NewNameLocked("slot");
  if (!env_->RenameFile(job.making, slot).ok()) {
    (void)env_->DeleteFile(job.making);
    return;
  }
  mapped_[slot] = std::move(map);
}

}  // namespace cairn
