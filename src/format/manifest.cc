#include "format/manifest.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

#include "codec/crc32c.h"
#include "format/bytes.h"
#include "format/layout.h"

namespace cairn {
namespace {
constexpr size_t kMaxFiles = 1 << 20;

// Names read from storage pass the same rules as names from the API, and a
// file must belong to the manifest's rank: a stored name is never trusted
// to stay inside its version directory (docs/format.md "Manifest").
Status CheckStoredNames(const Manifest& m, const FileEntry& f) {
  const std::string prefix = RankFilePrefix(m.rank);
  switch (f.kind) {
    case FileKind::kPart:
      if (f.name != PartFileName(m.rank)) {
        return Error(Code::kCorrupt, "part file '{}' is not rank {}'s", f.name, m.rank);
      }
      return Status::Ok();
    case FileKind::kRouted:
      CAIRN_RETURN_IF_ERROR(ValidateName("routed file name", f.logical));
      if (f.name != RoutedFileName(m.rank, f.logical)) {
        return Error(Code::kCorrupt, "routed file '{}' does not hold rank {}'s '{}'", f.name,
                     m.rank, f.logical);
      }
      return Status::Ok();
    case FileKind::kRedundancy:
      if (f.name != ParityFileName(m.rank) || !f.logical.empty()) {
        return Error(Code::kCorrupt, "redundancy parity file '{}' is not rank {}'s", f.name,
                     m.rank);
      }
      return Status::Ok();
    case FileKind::kParity:
      CAIRN_RETURN_IF_ERROR(ValidateName("parity file name", f.name));
      if (f.name.compare(0, prefix.size(), prefix) != 0 || !f.logical.empty()) {
        return Error(Code::kCorrupt, "parity file '{}' is not rank {}'s", f.name, m.rank);
      }
      return Status::Ok();
  }
  return Error(Code::kCorrupt, "bad file kind {}", static_cast<int>(f.kind));
}

// The redundancy record (format 3), after the file list: a scheme byte (0:
// none), then group, members and parity rows. It and a kRedundancy file
// come together or not at all.
Status DecodeRedundancy(ByteReader& r, Manifest* m) {
  const uint8_t scheme = r.U8();
  if (scheme != 0) {
    if (scheme > static_cast<uint8_t>(ParityScheme::kRs)) {
      return Error(Code::kCorrupt, "unknown redundancy scheme {}", scheme);
    }
    Manifest::Redundancy red;
    red.scheme = static_cast<ParityScheme>(scheme);
    red.group = r.U32();
    red.members = r.U32();
    red.parity_rows = r.U32();
    if (red.members < 2 || red.members > kMaxParityMembers || red.parity_rows < 1 ||
        red.parity_rows >= red.members) {
      return Error(Code::kCorrupt, "redundancy group of {} members with {} parity rows",
                   red.members, red.parity_rows);
    }
    m->redundancy = red;
  }
  const bool listed = std::any_of(m->files.begin(), m->files.end(), [](const FileEntry& f) {
    return f.kind == FileKind::kRedundancy;
  });
  if (listed != m->redundancy.has_value()) {
    return Error(Code::kCorrupt, "redundancy record and parity file disagree");
  }
  return Status::Ok();
}

// When the copy became ECC-protected (format 4, last field): a time exactly
// when a kParity sidecar is listed. Older formats wrote the sidecar before
// the manifest, so one that lists it was protected when it was created.
Status DecodeEccProtected(ByteReader& r, uint32_t format, Manifest* m) {
  const bool listed = std::any_of(m->files.begin(), m->files.end(), [](const FileEntry& f) {
    return f.kind == FileKind::kParity;
  });
  if (format < 4) {
    // Written back as format 4, where a listed sidecar needs a time > 0.
    if (listed && m->created == 0) {  // created is finite and >= 0 by now
      return Error(Code::kCorrupt, "ECC sidecar without a creation time");
    }
    m->ecc_protected = listed ? m->created : 0;
    return Status::Ok();
  }
  m->ecc_protected = r.F64();
  if (!std::isfinite(m->ecc_protected) || m->ecc_protected < 0) {
    return Error(Code::kCorrupt, "bad ECC protection time");
  }
  if (listed != (m->ecc_protected > 0)) {
    return Error(Code::kCorrupt, "ECC protection time and sidecar disagree");
  }
  return Status::Ok();
}

Status CheckIdentity(const Manifest& m) {
  CAIRN_RETURN_IF_ERROR(ValidateName("checkpoint name", m.name));
  if (m.version < 0) return Error(Code::kCorrupt, "negative version {}", m.version);
  if (m.nranks < 1 || m.rank < 0 || m.rank >= m.nranks) {
    return Error(Code::kCorrupt, "rank {} of {} ranks", m.rank, m.nranks);
  }
  return Status::Ok();
}
}  // namespace

uint64_t Manifest::DataBytes() const {
  uint64_t total = 0;
  for (const auto& f : files) total += f.size;
  return total;
}

std::string Manifest::Encode() const {
  ByteWriter w;
  w.Bytes(std::string_view(kManifestMagic, 8));
  w.U32(kManifestFormatVersion);
  w.U32(kBlockSize);
  w.I64(version);
  w.U32(static_cast<uint32_t>(rank));
  w.U32(static_cast<uint32_t>(nranks));
  w.U64(run_id);
  w.F64(created);
  w.String16(name);
  w.U32(static_cast<uint32_t>(files.size()));
  for (const auto& f : files) {
    w.U8(static_cast<uint8_t>(f.kind));
    w.String16(f.name);
    w.String16(f.logical);
    w.U64(f.size);
    w.U32(static_cast<uint32_t>(f.extents.size()));
    for (const auto& e : f.extents) {
      w.U64(e.offset);
      w.U64(e.length);
      for (uint32_t crc : e.crcs) w.U32(crc);
    }
  }
  w.U8(redundancy ? static_cast<uint8_t>(redundancy->scheme) : 0);
  if (redundancy) {
    w.U32(redundancy->group);
    w.U32(redundancy->members);
    w.U32(redundancy->parity_rows);
  }
  w.U32(static_cast<uint32_t>(references.size()));
  for (int64_t v : references) w.I64(v);
  w.F64(ecc_protected);
  w.U32(Crc32c(w.data().data(), w.data().size()));
  return std::move(w.data());
}

Result<Manifest> DecodeManifest(const std::string& bytes, const std::string& origin) {
  auto corrupt = [&](const char* why) { return Error(Code::kCorrupt, "manifest '{}': {}", origin, why); };
  if (bytes.size() < 12) return corrupt("truncated");
  uint32_t stored;
  std::memcpy(&stored, bytes.data() + bytes.size() - 4, 4);
  if (Crc32c(bytes.data(), bytes.size() - 4) != stored) return corrupt("checksum mismatch");
  ByteReader r(std::string_view(bytes).substr(0, bytes.size() - 4));
  if (r.Bytes(8) != std::string(kManifestMagic, 8)) return corrupt("bad magic");
  const uint32_t format = r.U32();
  if (format < 1 || format > kManifestFormatVersion) return corrupt("unknown format version");
  if (r.U32() != kBlockSize) return corrupt("unsupported block size");
  Manifest m;
  m.version = r.I64();
  m.rank = static_cast<int32_t>(r.U32());
  m.nranks = static_cast<int32_t>(r.U32());
  if (format >= 2) m.run_id = r.U64();
  m.created = r.F64();
  if (!std::isfinite(m.created) || m.created < 0) return corrupt("bad creation time");
  m.name = r.String16();
  uint32_t nfiles = r.U32();
  if (!r.ok() || nfiles > kMaxFiles) return corrupt("bad file count");
  if (Status s = CheckIdentity(m); !s.ok()) return corrupt(s.message().c_str());
  std::set<std::string> names;
  for (uint32_t i = 0; i < nfiles && r.ok(); ++i) {
    FileEntry f;
    f.kind = static_cast<FileKind>(r.U8());
    f.name = r.String16();
    f.logical = r.String16();
    f.size = r.U64();
    uint32_t nextents = r.U32();
    if (nextents > r.remaining() / 16) return corrupt("bad extent count");
    for (uint32_t j = 0; j < nextents && r.ok(); ++j) {
      Extent e;
      e.offset = r.U64();
      e.length = r.U64();
      if (e.offset + e.length > f.size || e.offset + e.length < e.offset) {
        return corrupt("extent outside its file");
      }
      uint64_t blocks = BlockCount(e.length);
      if (blocks > r.remaining() / 4) return corrupt("truncated checksum list");
      e.crcs.resize(blocks);
      for (auto& crc : e.crcs) crc = r.U32();
      f.extents.push_back(std::move(e));
    }
    if (!r.ok()) break;
    if (Status s = CheckStoredNames(m, f); !s.ok()) return corrupt(s.message().c_str());
    if (!names.insert(f.name).second) return corrupt("a file is listed twice");
    m.files.push_back(std::move(f));
  }
  if (!r.ok()) return corrupt("truncated");
  if (format >= 3) {
    if (Status s = DecodeRedundancy(r, &m); !s.ok()) return corrupt(s.message().c_str());
    const uint32_t references = r.U32();
    if (references > r.remaining() / 8) return corrupt("truncated references");
    for (uint32_t i = 0; i < references; ++i) {
      const int64_t v = r.I64();
      if (v < 0 || v >= m.version || (!m.references.empty() && v <= m.references.back())) {
        return corrupt("bad referenced version");
      }
      m.references.push_back(v);
    }
  }
  if (Status s = DecodeEccProtected(r, format, &m); !s.ok()) return corrupt(s.message().c_str());
  if (!r.ok()) return corrupt("truncated");
  if (r.remaining() != 0) return corrupt("trailing bytes");
  return m;
}

void ExtentChecksummer::Update(const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  AddPieces(n, [p](size_t at, size_t take, uint32_t crc) { return Crc32c(p + at, take, crc); });
}

void ExtentChecksummer::CopyAndUpdate(void* dst, const void* src, size_t n, CopyStores stores) {
  auto* d = static_cast<uint8_t*>(dst);
  const auto* s = static_cast<const uint8_t*>(src);
  AddPieces(n, [d, s, stores](size_t at, size_t take, uint32_t crc) {
    return CopyWithCrc32c(d + at, s + at, take, crc, stores);
  });
}

void ExtentChecksummer::RewindTo(const Mark& mark) {
  extent_.length = mark.length;
  extent_.crcs.resize(mark.blocks);
  crc_ = mark.crc;
  in_block_ = mark.in_block;
}

Extent ExtentChecksummer::Finish() {
  if (in_block_ > 0) extent_.crcs.push_back(crc_);
  crc_ = 0;
  in_block_ = 0;
  return std::move(extent_);
}

Status VerifyExtentRange(const Extent& extent, uint64_t offset, const void* data, size_t n,
                         const std::string& origin) {
  const auto* p = static_cast<const uint8_t*>(data);
  uint64_t end = std::min(offset + n, extent.offset + extent.length);
  uint64_t start = std::max(offset, extent.offset);
  if (start >= end) return Status::Ok();
  uint64_t first = (start - extent.offset + kBlockSize - 1) / kBlockSize;
  for (uint64_t b = first;; ++b) {
    uint64_t bstart = extent.offset + b * kBlockSize;
    uint64_t bend = std::min(bstart + kBlockSize, extent.offset + extent.length);
    if (bend > end || bstart >= bend) break;
    if (Crc32c(p + (bstart - offset), bend - bstart) != extent.crcs[b]) {
      return Error(Code::kCorrupt, "'{}': block {} (bytes {}..{}) fails its CRC32C", origin, b,
                   bstart, bend);
    }
  }
  return Status::Ok();
}

}  // namespace cairn
