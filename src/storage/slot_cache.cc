#include "storage/slot_cache.h"

#include <unistd.h>

#include <cstring>

namespace cairn {
namespace {

// Appends sequentially into a mapping; nothing to sync on tmpfs.
class MappedWritableFile final : public WritableFile {
 public:
  MappedWritableFile(std::shared_ptr<MappedFile> map, std::string path)
      : map_(std::move(map)), path_(std::move(path)) {}
  Status Append(const void* data, size_t n) override {
    if (n > map_->size() - pos_) {
      return Error(Code::kInternal, "'{}': write beyond its reserved {} bytes", path_,
                   map_->size());
    }
    std::memcpy(map_->data() + pos_, data, n);
    pos_ += n;
    return Status::Ok();
  }
  Status Sync() override { return Status::Ok(); }
  Status Close() override {
    if (pos_ != map_->size()) {
      return Error(Code::kInternal, "'{}': {} bytes written of {} reserved", path_, pos_,
                   map_->size());
    }
    return Status::Ok();
  }
  const std::string& path() const override { return path_; }

 private:
  std::shared_ptr<MappedFile> map_;
  std::string path_;
  uint64_t pos_ = 0;
};

}  // namespace

SlotCache::SlotCache(Env* env, std::string free_dir, std::string owner, int max_free, bool mapped,
                     const WriteOptions& file_options)
    : env_(env), free_dir_(std::move(free_dir)), owner_(std::move(owner)), max_free_(max_free),
      mapped_mode_(mapped), file_options_(file_options) {}

std::string SlotCache::TakeFreeSlotLocked() {
  auto entries = env_->ListDir(free_dir_);
  if (!entries.ok()) return "";
  std::string fallback;
  for (const auto& e : *entries) {
    if (e.is_dir || e.name.compare(0, owner_.size(), owner_) != 0) continue;
    std::string path = JoinPath(free_dir_, e.name);
    if (mapped_.count(path)) return path;  // already mapped here: the best
    if (fallback.empty()) fallback = path;
  }
  return fallback;
}

Result<std::unique_ptr<WritableFile>> SlotCache::Create(const std::string& path, uint64_t size) {
  std::lock_guard<std::mutex> lock(mu_);
  std::string slot = TakeFreeSlotLocked();
  if (!mapped_mode_) {
    WriteOptions options = file_options_;
    options.expected_size = size;
    options.reuse_existing = !slot.empty() && env_->RenameFile(slot, path).ok();
    return env_->NewWritableFile(path, options);
  }
  std::shared_ptr<MappedFile> map;
  if (!slot.empty() && env_->RenameFile(slot, path).ok()) {
    auto it = mapped_.find(slot);
    if (it != mapped_.end()) {
      if (it->second->size() == size) map = it->second;
      mapped_.erase(it);
    }
  } else if (!slot.empty()) {
    mapped_.erase(slot);  // someone else removed it
  }
  if (!map) {
    // A new file or a slot of another size: (re)map it at the right size.
    CAIRN_ASSIGN_OR_RETURN(auto fresh, env_->MapFile(path, size, /*writable=*/true));
    map = std::shared_ptr<MappedFile>(std::move(fresh));
  }
  mapped_[path] = map;
  return std::unique_ptr<WritableFile>(new MappedWritableFile(map, path));
}

void SlotCache::Renamed(const std::string& from, const std::string& to) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = mapped_.find(from);
  if (it == mapped_.end()) return;
  mapped_[to] = it->second;
  mapped_.erase(it);
}

Status SlotCache::Retire(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  int parked = 0;
  if (auto entries = env_->ListDir(free_dir_); entries.ok()) {
    for (const auto& e : *entries) parked += e.name.compare(0, owner_.size(), owner_) == 0;
  }
  if (parked < max_free_ && env_->CreateDirs(free_dir_).ok()) {
    std::string slot = JoinPath(free_dir_, owner_ + "slot" + std::to_string(::getpid()) + "." +
                                               std::to_string(next_slot_++));
    if (env_->RenameFile(path, slot).ok()) {
      auto it = mapped_.find(path);
      if (it != mapped_.end()) {
        mapped_[slot] = it->second;
        mapped_.erase(it);
      }
      return Status::Ok();
    }
  }
  mapped_.erase(path);
  return env_->DeleteFile(path);
}

void SlotCache::Forget(const std::string& path) {
  std::lock_guard<std::mutex> lock(mu_);
  mapped_.erase(path);
}

}  // namespace cairn
