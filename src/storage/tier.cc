#include "storage/tier.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>

#include "base/log.h"
#include "storage/pmem_writes.h"

namespace cairn {
namespace {
// Smaller files are cheap to create; only large ones are worth a slot.
constexpr uint64_t kSlotMinBytes = 1 << 20;
constexpr size_t kVersionDigits = 10;

// digits as a number in [0, max] if it is all decimal digits; from_chars
// reports overflow instead of throwing as std::stoi does.
std::optional<int64_t> ParseBoundedDecimal(std::string_view digits, int64_t max) {
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), [](char c) {
        return c >= '0' && c <= '9';
      })) {
    return std::nullopt;
  }
  int64_t value = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || end != digits.data() + digits.size() || value > max) {
    return std::nullopt;
  }
  return value;
}
}  // namespace

PendingFile::PendingFile(Env* env, std::unique_ptr<WritableFile> file, std::string tmp,
                         std::string path, bool persist, SlotCache* slots)
    : env_(env), file_(std::move(file)), tmp_(std::move(tmp)), path_(std::move(path)),
      persist_(persist), slots_(slots) {}

PendingFile::~PendingFile() {
  if (committed_) return;
  file_.reset();
  if (slots_ != nullptr) {
    (void)slots_->Retire(tmp_);  // still a good slot
  } else {
    (void)env_->DeleteFile(tmp_);
  }
}

Status PendingFile::Commit() {
  if (persist_) CAIRN_RETURN_IF_ERROR(file_->Sync());
  CAIRN_RETURN_IF_ERROR(file_->Close());
  CAIRN_RETURN_IF_ERROR(env_->RenameFile(tmp_, path_));
  if (slots_ != nullptr) slots_->Renamed(tmp_, path_);
  committed_ = true;
  return persist_ ? env_->SyncDir(DirName(path_)) : Status::Ok();
}

Tier::Tier(Env* env, TierKind kind, std::string root, const TierConfig& config)
    : env_(env), kind_(kind), root_(std::move(root)), config_(config) {}

std::string Tier::VersionDir(const std::string& name, int64_t version) const {
  return JoinPath(JoinPath(root_, name), fmt::format("v{:0{}}", version, kVersionDigits));
}

std::optional<int64_t> Tier::ParseVersionDirName(std::string_view dir_name) {
  if (dir_name.size() != 1 + kVersionDigits || dir_name[0] != 'v') return std::nullopt;
  return ParseBoundedDecimal(dir_name.substr(1), kMaxVersion);
}

std::string Tier::FilePath(const std::string& name, int64_t version,
                           const std::string& file) const {
  return JoinPath(VersionDir(name, version), file);
}

Result<std::unique_ptr<PendingFile>> Tier::Create(const std::string& name, int64_t version,
                                                  const std::string& file,
                                                  uint64_t expected_size) {
  std::string dir = VersionDir(name, version);
  bool existed = env_->FileExists(dir);
  CAIRN_RETURN_IF_ERROR(CreateVersionDir(name, version));
  if (!existed && persists()) {
    // The new directory's own entry must be durable before files in it count.
    CAIRN_RETURN_IF_ERROR(env_->SyncDir(JoinPath(root_, name)));
  }
  const bool slot_file = slots_ && expected_size >= kSlotMinBytes &&
                         file.compare(0, slot_owner_.size(), slot_owner_) == 0;
  // A part written into a parked slot takes no new room.
  CAIRN_RETURN_IF_ERROR(
      EnsureRoom(slot_file ? slots_->GrowthOfCreate(expected_size) : expected_size));
  std::string path = JoinPath(dir, file);
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  if (slot_file) {
    CAIRN_ASSIGN_OR_RETURN(auto mapped, slots_->Create(tmp, expected_size));
    return std::make_unique<PendingFile>(env_, std::move(mapped), tmp, path, persists(),
                                         slots_.get());
  }
  WriteOptions options;
  options.direct_io = config_.direct_io && persists();
  options.expected_size = expected_size;
  // A temporary name must be new (O_EXCL): one left by an earlier process
  // of the same pid is ours to delete first (unlink removes a link, never
  // its target).
  options.create_new = true;
  CAIRN_RETURN_IF_ERROR(env_->DeleteFile(tmp));
  auto writable = env_->NewWritableFile(tmp, options);
  if (!writable.ok() && !env_->FileExists(dir)) {
    // A rank sharing this tier retired an empty directory of the same name
    // between our mkdir and our create: make it again, once.
    CAIRN_RETURN_IF_ERROR(CreateVersionDir(name, version));
    writable = env_->NewWritableFile(tmp, options);
  }
  if (!writable.ok()) return writable.status();
  return std::make_unique<PendingFile>(env_, std::move(writable).value(), tmp, path, persists(),
                                       nullptr);
}

Status Tier::PutFile(const std::string& name, int64_t version, const std::string& file,
                     const std::string& bytes) {
  CAIRN_ASSIGN_OR_RETURN(auto pending, Create(name, version, file, bytes.size()));
  CAIRN_RETURN_IF_ERROR(pending->file().Append(bytes.data(), bytes.size()));
  return pending->Commit();
}

Result<std::unique_ptr<ReadableFile>> Tier::Open(const std::string& name, int64_t version,
                                                 const std::string& file) const {
  return env_->NewReadableFile(FilePath(name, version, file));
}

Result<std::string> Tier::GetFile(const std::string& name, int64_t version,
                                  const std::string& file, uint64_t max_bytes) const {
  return env_->ReadFileUpTo(FilePath(name, version, file), max_bytes);
}

Status Tier::Remove(const std::string& name, int64_t version, const std::string& file) {
  std::string path = FilePath(name, version, file);
  // A mapping kept of a deleted file would keep its pages allocated.
  if (slots_) slots_->Forget(path);
  return env_->DeleteFile(path);
}

Status Tier::Retire(const std::string& name, int64_t version, const std::string& file) {
  std::string path = FilePath(name, version, file);
  if (slots_ && file.compare(0, slot_owner_.size(), slot_owner_) == 0) {
    auto size = env_->FileSize(path);
    if (size.ok() && *size >= kSlotMinBytes) return slots_->Retire(path);
    slots_->Forget(path);
  }
  return env_->DeleteFile(path);
}

void Tier::EnableSlots(const std::string& owner, int max_free, const ThreadOptions& reserver) {
  slot_owner_ = owner;
  WriteOptions options;
  options.direct_io = config_.direct_io && persists();
  auto room = [this](uint64_t bytes) {
    if (config_.capacity == 0) return true;
    auto used = UsedBytes();
    return used.ok() && *used + bytes <= config_.capacity;
  };
  slots_ = std::make_unique<SlotCache>(env_, FreeSlotDir(), owner, max_free,
                                       /*mapped=*/MapsSlots(), options, room, reserver);
  if (kind_ == TierKind::kPmem) {
    // When the medium cannot be probed, the safe writes: memcpy, then
    // msync at every commit, whatever the medium turns out to be.
    auto writes = PmemTierWrites(root_);
    if (!writes.ok()) {
      Log(LogLevel::kWarn, "tier pmem: {}; writing its slots with memcpy and msync",
          writes.status().ToString());
      writes = MappedWrites{nullptr, [](MappedFile& map) { return map.Sync(); }};
    }
    slots_->SetMappedWrites(std::move(writes).value());
  }
}

std::string Tier::FreeSlotDir() const { return JoinPath(root_, ".free"); }

void Tier::ReserveSlots(const std::vector<uint64_t>& sizes, int count) {
  if (!slots_ || !MapsSlots()) return;
  std::vector<uint64_t> worth;
  for (uint64_t size : sizes) {
    if (size >= kSlotMinBytes) worth.push_back(size);
  }
  if (!worth.empty()) slots_->Reserve(worth, count);
}

void Tier::WaitForSlots() {
  if (slots_) slots_->WaitReserved();
}

void Tier::UnmapLater(std::unique_ptr<MappedFile> map) const {
  if (slots_) slots_->UnmapLater(std::move(map));
}

Tier::SlotHold::SlotHold(Tier* tier, SlotWork work)
    : slots_(tier != nullptr ? tier->slots_.get() : nullptr), work_(work) {
  if (slots_ == nullptr) return;
  if (work_ == SlotWork::kAll) {
    slots_->Pause();
  } else {
    slots_->HoldDeletions();
  }
}

Tier::SlotHold::~SlotHold() {
  if (slots_ == nullptr) return;
  if (work_ == SlotWork::kAll) {
    slots_->Resume();
  } else {
    slots_->ReleaseDeletions();
  }
}

uint64_t Tier::ReleaseParkedSlots() { return slots_ ? slots_->ReleaseParked() : 0; }

Status Tier::EnsureRoom(uint64_t bytes) {
  if (config_.capacity == 0 || bytes == 0) return Status::Ok();
  CAIRN_ASSIGN_OR_RETURN(uint64_t used, UsedBytes());
  if (used + bytes > config_.capacity && ReleaseParkedSlots() > 0) {
    CAIRN_ASSIGN_OR_RETURN(used, UsedBytes());
  }
  if (used + bytes > config_.capacity) {
    return Error(Code::kNoSpace, "tier '{}' at '{}' is full: {} bytes used + {} needed > capacity {}",
                 TierKindName(kind_), root_, used, bytes, config_.capacity);
  }
  return Status::Ok();
}

Status Tier::CreateVersionDir(const std::string& name, int64_t version) {
  std::string dir = VersionDir(name, version);
  CAIRN_RETURN_IF_ERROR(env_->CreateDirs(dir));
  CAIRN_RETURN_IF_ERROR(env_->CheckPrivateDir(JoinPath(root_, name)));
  return env_->CheckPrivateDir(dir);
}

std::vector<std::string> Tier::OwnedDirs() const {
  // Count the pattern's components from the first placeholder on (after
  // {dir}, which is the user's): each names one directory of the root, from
  // its end, since no placeholder but {dir} expands to more than one.
  std::vector<std::string> components;
  for (size_t start = 0; start <= config_.path.size();) {
    size_t slash = std::min(config_.path.find('/', start), config_.path.size());
    if (slash > start) components.push_back(config_.path.substr(start, slash - start));
    start = slash + 1;
  }
  size_t first = 0;
  while (first < components.size() && components[first].find('{') == std::string::npos) ++first;
  if (first < components.size() && components[first] == "{dir}") ++first;
  size_t owned = std::max<size_t>(components.size() - std::min(first, components.size()), 1);
  std::vector<std::string> dirs;
  std::string dir = root_;
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  for (size_t i = 0; i < owned && dir != "/" && dir != "."; ++i, dir = DirName(dir)) {
    dirs.push_back(dir);
  }
  return dirs;
}

Status Tier::PrepareRoot() {
  CAIRN_RETURN_IF_ERROR(env_->CreateDirs(root_));
  for (const auto& dir : OwnedDirs()) {
    CAIRN_RETURN_IF_ERROR(env_->CheckPrivateDir(dir).Annotate(
        fmt::format("tier '{}' (tiers.{}.path = '{}')", name(), name(), config_.path)));
  }
  return Status::Ok();
}

void Tier::RemoveEmptyDirectories() {
  auto remove_if_empty = [this](const std::string& dir) {
    auto entries = env_->ListDir(dir);
    return entries.ok() && entries->empty() && env_->DeleteDir(dir).ok();
  };
  if (auto names = Names(); names.ok()) {
    for (const auto& name : *names) (void)remove_if_empty(JoinPath(root_, name));
  }
  (void)remove_if_empty(FreeSlotDir());
  std::string route = JoinPath(root_, ".route");
  if (auto ranks = env_->ListDir(route); ranks.ok()) {
    for (const auto& e : *ranks) (void)remove_if_empty(JoinPath(route, e.name));
  }
  (void)remove_if_empty(route);
  for (const auto& dir : OwnedDirs()) {
    if (!remove_if_empty(dir)) break;
  }
}

Status Tier::RemoveVersionDirIfEmpty(const std::string& name, int64_t version) {
  std::string dir = VersionDir(name, version);
  auto files = env_->ListDir(dir);
  if (!files.ok() || !files->empty()) return Status::Ok();
  // Best effort: a rank sharing this tier may have just added a file, and
  // then the directory rightly stays.
  (void)env_->DeleteDir(dir);
  return Status::Ok();
}

Result<std::vector<std::string>> Tier::Names() const {
  auto entries = env_->ListDir(root_);
  if (!entries.ok()) {
    if (entries.status().code() == Code::kNotFound) return std::vector<std::string>{};
    return entries.status();
  }
  std::vector<std::string> names;
  for (const auto& e : *entries) {
    if (e.is_dir && !e.name.empty() && e.name[0] != '.') names.push_back(e.name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

Result<std::vector<int64_t>> Tier::Versions(const std::string& name) const {
  auto entries = env_->ListDir(JoinPath(root_, name));
  if (!entries.ok()) {
    if (entries.status().code() == Code::kNotFound) return std::vector<int64_t>{};
    return entries.status();
  }
  std::vector<int64_t> versions;
  for (const auto& e : *entries) {
    if (!e.is_dir) continue;
    if (auto version = ParseVersionDirName(e.name)) versions.push_back(*version);
  }
  std::sort(versions.begin(), versions.end());
  return versions;
}

Result<std::vector<std::string>> Tier::Files(const std::string& name, int64_t version) const {
  auto entries = env_->ListDir(VersionDir(name, version));
  if (!entries.ok()) {
    if (entries.status().code() == Code::kNotFound) return std::vector<std::string>{};
    return entries.status();
  }
  std::vector<std::string> files;
  for (const auto& e : *entries) {
    if (!e.is_dir) files.push_back(e.name);
  }
  std::sort(files.begin(), files.end());
  return files;
}

Result<uint64_t> Tier::UsedBytes() const {
  CAIRN_ASSIGN_OR_RETURN(uint64_t versions, VersionBytes());
  return versions + DirBytes(FreeSlotDir());
}

uint64_t Tier::DirBytes(const std::string& dir) const {
  uint64_t total = 0;
  auto entries = env_->ListDir(dir);
  if (!entries.ok()) return 0;
  for (const auto& e : *entries) {
    auto size = e.is_dir ? Result<uint64_t>(uint64_t{0}) : env_->FileSize(JoinPath(dir, e.name));
    if (size.ok()) total += *size;  // a file removed meanwhile by a peer rank
  }
  return total;
}

Result<uint64_t> Tier::VersionBytes() const {
  uint64_t total = 0;
  CAIRN_ASSIGN_OR_RETURN(auto names, Names());
  for (const auto& name : names) {
    CAIRN_ASSIGN_OR_RETURN(auto versions, Versions(name));
    for (int64_t v : versions) total += DirBytes(VersionDir(name, v));
  }
  return total;
}

std::optional<int> ParseNodeDirName(std::string_view dir_name) {
  auto node = ParseBoundedDecimal(dir_name, std::numeric_limits<int>::max());
  // Only the canonical form: "007" would be opened as node 7's "7".
  if (!node || std::to_string(*node) != dir_name) return std::nullopt;
  return static_cast<int>(*node);
}

}  // namespace cairn
