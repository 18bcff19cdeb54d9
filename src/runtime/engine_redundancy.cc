// Cross-node redundancy in the engine: the payload, encode and commit of
// parity, rebuild and write-back (engine_redundancy.h).
#include "runtime/engine_redundancy.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "base/log.h"
#include "format/layout.h"
#include "runtime/catalog.h"
#include "runtime/part_io.h"

namespace cairn {
namespace {

// Appends happen in pieces of this size (as part_io does).
constexpr uint64_t kWritePiece = uint64_t{8} << 20;

bool IsNodeLocal(TierKind kind) { return kind != TierKind::kPfs; }

// The files a payload carries: what a restart needs, not the ECC sidecar
// (which drains leave behind, so copies on different tiers still have the
// same payload) nor the redundancy parity itself.
bool Protected(const FileEntry& f) {
  return f.kind == FileKind::kPart || f.kind == FileKind::kRouted;
}

// The manifest as the payload carries it: its protected files only, no
// redundancy record. The same bytes on every tier that holds the copy.
Manifest PayloadView(const Manifest& m) {
  Manifest out = m;
  out.files.clear();
  for (const FileEntry& f : m.files) {
    if (Protected(f)) out.files.push_back(f);
  }
  out.redundancy.reset();
  out.ecc_protected = 0;  // the ECC sidecar is not carried
  return out;
}

Status ReadWholeFile(const Tier& t, const std::string& name, int64_t version,
                     const FileEntry& f, uint8_t* dst) {
  CAIRN_ASSIGN_OR_RETURN(auto file, t.Open(name, version, f.name));
  if (file->size() != f.size) {
    return Error(Code::kCorrupt, "'{}' has {} bytes, its manifest says {}", file->path(),
                 file->size(), f.size);
  }
  CAIRN_RETURN_IF_ERROR(file->ReadAt(0, dst, f.size));
  for (const Extent& e : f.extents) {
    CAIRN_RETURN_IF_ERROR(VerifyExtentRange(e, 0, dst, f.size, file->path()));
  }
  return Status::Ok();
}

void PutU64(uint8_t* at, uint64_t v) {
  for (int i = 0; i < 8; ++i) at[i] = static_cast<uint8_t>(v >> (8 * i));
}

uint64_t GetU64(const uint8_t* at) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t{at[i]} << (8 * i);
  return v;
}

// What this rank holds of a version for a rebuild.
struct HeldCopy {
  std::optional<std::vector<uint8_t>> payload;  // checked whole, from the fastest tier
  std::unique_ptr<GroupParity> parity;          // from a node-local protected copy
  bool protected_here = false;  // a node-local copy with its parity, both whole
};

HeldCopy ReadHeldCopy(const std::array<Tier*, kTierKinds>& tiers, const std::string& name,
                      int64_t version, int rank, int nranks) {
  HeldCopy held;
  for (Tier* t : tiers) {
    if (t == nullptr) continue;
    auto m = CheckCopy(*t, name, version, rank, nranks);
    if (!m.ok()) continue;
    bool payload_here = false;
    if (!held.payload) {
      auto payload = ReadRedundancyPayload(*t, *m);
      if (payload.ok()) {
        held.payload = std::move(*payload);
        payload_here = true;
      } else {
        Log(LogLevel::kWarn, "copy of '{}' version {} on tier {} is unusable: {}", name, version,
            t->name(), payload.status().ToString());
      }
    }
    if (!held.parity && IsNodeLocal(t->kind()) && m->redundancy) {
      auto parity = ReadParityFile(*t, *m);
      if (parity.ok()) {
        held.parity = std::make_unique<GroupParity>(std::move(*parity));
        held.protected_here = payload_here;
      } else {
        Log(LogLevel::kWarn, "redundancy parity of '{}' version {} on tier {} is unusable: {}",
            name, version, t->name(), parity.status().ToString());
      }
    }
  }
  return held;
}

}  // namespace

namespace {

// The payload of m: its size, and its bytes read into dst (which holds
// that many), each file checked block by block.
uint64_t PayloadSize(const Manifest& m, const std::string& manifest) {
  uint64_t total = manifest.size() + 8;
  for (const FileEntry& f : m.files) total += Protected(f) ? f.size : 0;
  return total;
}

Status FillPayload(const Tier& t, const Manifest& m, const std::string& manifest, uint8_t* dst) {
  uint64_t at = 0;
  for (const FileEntry& f : m.files) {
    if (!Protected(f)) continue;
    CAIRN_RETURN_IF_ERROR(ReadWholeFile(t, m.name, m.version, f, dst + at));
    at += f.size;
  }
  std::memcpy(dst + at, manifest.data(), manifest.size());
  PutU64(dst + at + manifest.size(), manifest.size());
  return Status::Ok();
}

}  // namespace

Result<std::vector<uint8_t>> ReadRedundancyPayload(const Tier& t, const Manifest& m) {
  const std::string manifest = PayloadView(m).Encode();
  std::vector<uint8_t> payload(PayloadSize(m, manifest));
  CAIRN_RETURN_IF_ERROR(FillPayload(t, m, manifest, payload.data()));
  return payload;
}

Result<std::span<const uint8_t>> ReadRedundancyPayload(const Tier& t, const Manifest& m,
                                                       AlignedBuffer* buffer) {
  const std::string manifest = PayloadView(m).Encode();
  const uint64_t size = PayloadSize(m, manifest);
  // Kept when large enough: its pages stay faulted in from one version to
  // the next, as the encoder's buffers do.
  if (buffer->size() < size) *buffer = AlignedBuffer(size);
  CAIRN_RETURN_IF_ERROR(FillPayload(t, m, manifest, buffer->data()));
  return std::span<const uint8_t>(buffer->data(), size);
}

Status CheckIntactCopy(const Tier& t, const std::string& name, int64_t version, int rank,
                       int nranks) {
  CAIRN_ASSIGN_OR_RETURN(Manifest m, CheckCopy(t, name, version, rank, nranks));
  for (const FileEntry& f : m.files) {
    if (Protected(f)) CAIRN_RETURN_IF_ERROR(VerifyFile(t, name, version, f));
  }
  return Status::Ok();
}

Result<GroupParity> ReadParityFile(const Tier& t, const Manifest& m) {
  auto entry = std::find_if(m.files.begin(), m.files.end(),
                            [](const FileEntry& f) { return f.kind == FileKind::kRedundancy; });
  if (entry == m.files.end()) {
    return Error(Code::kNotFound, "rank {}'s copy of '{}' version {} on tier {} has no parity",
                 m.rank, m.name, m.version, t.name());
  }
  const std::string path = t.FilePath(m.name, m.version, entry->name);
  std::vector<uint8_t> bytes(entry->size);
  CAIRN_RETURN_IF_ERROR(ReadWholeFile(t, m.name, m.version, *entry, bytes.data()));
  uint64_t header_bytes = 0;
  CAIRN_ASSIGN_OR_RETURN(
      ParityHeader header,
      DecodeParityHeader(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
                         path, &header_bytes));
  if (bytes.size() - header_bytes != header.RowsBytes()) {
    return Error(Code::kCorrupt, "'{}': {} bytes of rows, its header says {}", path,
                 bytes.size() - header_bytes, header.RowsBytes());
  }
  GroupParity parity;
  parity.header = std::move(header);
  parity.rows = AlignedBuffer(parity.header.RowsBytes());
  if (parity.rows.size() > 0) {
    std::memcpy(parity.rows.data(), bytes.data() + header_bytes, parity.rows.size());
  }
  return parity;
}

Result<Manifest> PayloadManifest(const std::vector<uint8_t>& payload, const std::string& origin) {
  if (payload.size() < 8) return Error(Code::kCorrupt, "{}: payload of {} bytes", origin, payload.size());
  const uint64_t length = GetU64(payload.data() + payload.size() - 8);
  if (length > payload.size() - 8) {
    return Error(Code::kCorrupt, "{}: a manifest of {} bytes in a payload of {}", origin, length,
                 payload.size());
  }
  const uint64_t files_end = payload.size() - 8 - length;
  CAIRN_ASSIGN_OR_RETURN(
      Manifest m,
      DecodeManifest(std::string(reinterpret_cast<const char*>(payload.data()) + files_end, length),
                     origin));
  uint64_t sum = 0;
  for (const FileEntry& f : m.files) sum += Protected(f) ? f.size : 0;
  if (sum != files_end || m.redundancy) {
    return Error(Code::kCorrupt, "{}: the payload's files do not match its manifest", origin);
  }
  return m;
}

EngineRedundancy::EngineRedundancy(Comm& job_comm, std::unique_ptr<Comm> own_comm,
                                   const RedundancySettings& settings, GroupPlan plan)
    : job_comm_(job_comm),
      own_comm_(std::move(own_comm)),
      settings_(settings),
      plan_(std::move(plan)),
      background_(own_comm_ != nullptr) {}

Result<std::unique_ptr<EngineRedundancy>> EngineRedundancy::Open(
    Comm& job_comm, const RedundancySettings& settings) {
  if (settings.scheme == RedundancyScheme::kNone) return std::unique_ptr<EngineRedundancy>();
  CAIRN_ASSIGN_OR_RETURN(std::vector<int64_t> nodes, job_comm.Allgather(job_comm.node()));
  std::vector<int> node_of_rank(nodes.begin(), nodes.end());
  Result<GroupPlan> plan = FormGroups(node_of_rank, settings);
  CAIRN_RETURN_IF_ERROR(job_comm.Agree(plan.status()));
  std::unique_ptr<Comm> own;
  if (!settings.sync) {
    // Every rank encodes in the background, or none does: the encode is
    // collective, and must run on the same kind of thread everywhere.
    auto dup = job_comm.DupForThread();
    CAIRN_ASSIGN_OR_RETURN(bool everywhere, job_comm.AllTrue(dup.ok()));
    if (everywhere) {
      own = std::move(dup).value();
    } else if (job_comm.rank() == 0) {
      Log(LogLevel::kInfo,
          "redundancy: parity is encoded inside cairn_checkpoint, not in the background ({})",
          dup.ok() ? "another rank cannot communicate from two threads" : dup.status().message());
    }
  }
  const RedundancyGroup& mine = plan->GroupOf(job_comm.rank());
  Log(LogLevel::kInfo, "redundancy: scheme {} in {} group(s); this rank's group {} has {} members",
      RedundancySchemeName(settings.scheme), plan->groups.size(), mine.id, mine.members.size());
  return std::unique_ptr<EngineRedundancy>(
      new EngineRedundancy(job_comm, std::move(own), settings, std::move(*plan)));
}

Result<FileEntry> EngineRedundancy::WriteParityFile(Tier& t, const std::string& name,
                                                    int64_t version, const GroupParity& parity) {
  const std::string header = EncodeParityHeader(parity.header);
  const uint64_t rows = parity.header.RowsBytes();
  FileEntry entry{FileKind::kRedundancy, ParityFileName(encode_comm().rank()), "",
                  header.size() + rows, {}};
  CAIRN_ASSIGN_OR_RETURN(auto pending, t.Create(name, version, entry.name, entry.size));
  ExtentChecksummer sum(0);
  CAIRN_RETURN_IF_ERROR(pending->file().Append(header.data(), header.size()));
  sum.Update(header.data(), header.size());
  for (uint64_t at = 0; at < rows; at += kWritePiece) {
    const uint64_t take = std::min(kWritePiece, rows - at);
    CAIRN_RETURN_IF_ERROR(pending->file().Append(parity.rows.data() + at, take));
    sum.Update(parity.rows.data() + at, take);
  }
  CAIRN_RETURN_IF_ERROR(pending->Commit());
  entry.extents.push_back(sum.Finish());
  return entry;
}

Manifest EngineRedundancy::ProtectedManifest(const Manifest& committed,
                                             const FileEntry& parity_file,
                                             const ParityHeader& header) const {
  Manifest m = committed;
  std::erase_if(m.files, [](const FileEntry& f) { return f.kind == FileKind::kRedundancy; });
  m.files.push_back(parity_file);
  m.redundancy = Manifest::Redundancy{header.scheme, header.group,
                                      static_cast<uint32_t>(header.members.size()),
                                      header.parity_rows};
  return m;
}

Result<uint64_t> EngineRedundancy::ProtectVersion(Tier& t, const std::string& name,
                                                  int64_t version) {
  Comm& comm = encode_comm();
  const std::string what = fmt::format("protecting '{}' version {} with {} redundancy", name,
                                       version, RedundancySchemeName(settings_.scheme));
  Manifest committed;
  std::span<const uint8_t> payload;
  Status read = [&]() -> Status {
    CAIRN_ASSIGN_OR_RETURN(committed, CheckCopy(t, name, version, comm.rank(), comm.size()));
    CAIRN_ASSIGN_OR_RETURN(payload, ReadRedundancyPayload(t, committed, &payload_));
    return Status::Ok();
  }();
  CAIRN_RETURN_IF_ERROR(comm.Agree(read).Annotate(what));
  if (!encoder_) encoder_ = std::make_unique<GroupEncoder>(&comm, &plan_, settings_);
  CAIRN_RETURN_IF_ERROR(comm.Agree(encoder_->Encode(version, payload, &parity_)).Annotate(what));
  Result<FileEntry> file = WriteParityFile(t, name, version, parity_);
  Status written = comm.Agree(file.status());
  // Every member of every group has committed its parity: only now may a
  // manifest say the version is protected.
  std::string manifest;
  if (written.ok()) {
    manifest = ProtectedManifest(committed, *file, parity_.header).Encode();
    written = comm.Agree(t.PutFile(name, version, ManifestFileName(comm.rank()), manifest));
  }
  if (!written.ok()) {
    (void)t.Remove(name, version, ParityFileName(comm.rank()));
    return written.Annotate(what);
  }
  Log(LogLevel::kDebug, "'{}' version {}: parity committed on {} ({} bytes)", name, version,
      t.name(), file->size);
  return file->size + manifest.size();
}

namespace {

// Writes this rank's whole copy, rebuilt or read, to t: the manifest goes
// first (the copy counts as incomplete meanwhile) and comes back last,
// listing the parity file the caller has committed. The bytes written.
Result<uint64_t> WriteProtectedCopy(Tier& t, const std::vector<uint8_t>& payload,
                                    const Manifest& protected_manifest) {
  const std::string& name = protected_manifest.name;
  const int64_t version = protected_manifest.version;
  const std::string manifest_file = ManifestFileName(protected_manifest.rank);
  if (auto files = t.Files(name, version);
      files.ok() && std::count(files->begin(), files->end(), manifest_file)) {
    CAIRN_RETURN_IF_ERROR(t.Remove(name, version, manifest_file));
  }
  uint64_t at = 0;
  for (const FileEntry& f : protected_manifest.files) {
    if (!Protected(f)) continue;
    std::vector<uint8_t> bytes(payload.begin() + static_cast<ptrdiff_t>(at),
                               payload.begin() + static_cast<ptrdiff_t>(at + f.size));
    CAIRN_RETURN_IF_ERROR(WriteVerifiedBuffer(t, name, version, f, bytes));
    at += f.size;
  }
  const std::string manifest = protected_manifest.Encode();
  CAIRN_RETURN_IF_ERROR(t.PutFile(name, version, manifest_file, manifest));
  return at + manifest.size();
}

}  // namespace

Result<RebuildSummary> EngineRedundancy::RebuildVersion(const std::array<Tier*, kTierKinds>& tiers,
                                                        Tier* write_back, const std::string& name,
                                                        int64_t version) {
  Comm& comm = job_comm_;
  HeldCopy held = ReadHeldCopy(tiers, name, version, comm.rank(), comm.size());
  LocalCopy local;
  if (held.payload) local.part = std::span<const uint8_t>(*held.payload);
  local.parity = held.parity.get();
  CAIRN_ASSIGN_OR_RETURN(RebuildOutcome out,
                         RebuildGroupParts(comm, plan_, settings_, version, local));
  uint64_t bytes_written = 0;
  Status wrote = [&]() -> Status {
    if (held.protected_here && !out.part && !out.parity) return Status::Ok();
    if (write_back == nullptr) return Error(Code::kInternal, "no node-local tier to write back to");
    if ((!out.part && !held.payload) || (!out.parity && !held.parity)) {
      return Error(Code::kInternal, "rank {}: nothing to write back", comm.rank());
    }
    const std::vector<uint8_t>& payload = out.part ? *out.part : *held.payload;
    const GroupParity& parity = out.parity ? *out.parity : *held.parity;
    CAIRN_ASSIGN_OR_RETURN(Manifest m,
                           PayloadManifest(payload, fmt::format("rebuilt payload of rank {}",
                                                                comm.rank())));
    CAIRN_ASSIGN_OR_RETURN(FileEntry parity_file,
                           WriteParityFile(*write_back, name, version, parity));
    CAIRN_ASSIGN_OR_RETURN(uint64_t copy_bytes,
                           WriteProtectedCopy(*write_back, payload,
                                              ProtectedManifest(m, parity_file, parity.header)));
    bytes_written = parity_file.size + copy_bytes;
    return Status::Ok();
  }();
  CAIRN_RETURN_IF_ERROR(comm.Agree(wrote).Annotate(
      fmt::format("writing back the rebuilt copies of '{}' version {}", name, version)));
  return RebuildSummary{version, out.parts_rebuilt, out.parities_rebuilt,
                        RedundancySchemeName(settings_.scheme), bytes_written};
}

}  // namespace cairn
