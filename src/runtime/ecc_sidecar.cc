#include "runtime/ecc_sidecar.h"

#include <algorithm>
#include <cstring>

#include "codec/crc32c.h"
#include "format/bytes.h"
#include "format/layout.h"

namespace cairn {
namespace {

static_assert(kRegionAlign % kEccShardSize == 0, "a shard must not straddle two regions");

constexpr uint64_t kS = kEccShardSize;

// What the sidecar's header says.
struct EccGeometry {
  RsCodeId code = RsCodeId::kRs36_32;
  int k = 0;
  int m = 0;
  uint64_t part_size = 0;
  uint64_t stripes = 0;
  uint64_t RecordBytes() const { return m * kS + 4ull * (k + m); }
  uint64_t FileSize() const { return kEccHeaderSize + stripes * RecordBytes(); }
};

EccGeometry GeometryFor(const RsCode& code, uint64_t part_size) {
  EccGeometry g;
  g.code = code.id();
  g.k = code.k();
  g.m = code.m();
  g.part_size = part_size;
  uint64_t stripe_bytes = static_cast<uint64_t>(g.k) * kS;
  g.stripes = (part_size + stripe_bytes - 1) / stripe_bytes;
  return g;
}

std::string EncodeHeader(const EccGeometry& g) {
  ByteWriter w;
  w.Bytes(std::string_view(kEccMagic, 8));
  w.U32(kFormatVersion);
  w.U8(static_cast<uint8_t>(g.code));
  w.U8(static_cast<uint8_t>(g.k));
  w.U8(static_cast<uint8_t>(g.m));
  w.U8(0);
  w.U32(kEccShardSize);
  w.U64(g.part_size);
  w.U64(g.stripes);
  w.U32(Crc32c(w.data().data(), w.data().size()));
  return std::move(w.data());
}

Result<EccGeometry> DecodeHeader(const std::string& bytes, const std::string& origin) {
  auto corrupt = [&](const char* why) {
    return Error(Code::kCorrupt, "ECC sidecar '{}': {}", origin, why);
  };
  if (bytes.size() < kEccHeaderSize) return corrupt("truncated header");
  uint32_t stored;
  std::memcpy(&stored, bytes.data() + kEccHeaderSize - 4, 4);
  if (Crc32c(bytes.data(), kEccHeaderSize - 4) != stored) return corrupt("header checksum mismatch");
  ByteReader r(std::string_view(bytes).substr(0, kEccHeaderSize - 4));
  if (r.Bytes(8) != std::string(kEccMagic, 8)) return corrupt("bad magic");
  if (r.U32() != kFormatVersion) return corrupt("unknown format version");
  EccGeometry g;
  uint8_t code = r.U8();
  if (code != static_cast<uint8_t>(RsCodeId::kRs36_32) &&
      code != static_cast<uint8_t>(RsCodeId::kRs19_16)) {
    return corrupt("unknown code");
  }
  g.code = static_cast<RsCodeId>(code);
  g.k = r.U8();
  g.m = r.U8();
  (void)r.U8();
  uint32_t shard = r.U32();
  g.part_size = r.U64();
  g.stripes = r.U64();
  if (!r.ok()) return corrupt("truncated header");
  RsCode rs(g.code);
  if (g.k != rs.k() || g.m != rs.m() || shard != kEccShardSize) return corrupt("bad geometry");
  if (g.stripes != GeometryFor(rs, g.part_size).stripes) return corrupt("bad stripe count");
  return g;
}

// The bytes of the part file at [offset, offset + kS), zero beyond its end,
// taken from the header and application memory: a pointer into a region
// when the shard lies wholly inside it (no copy), else `scratch` filled in.
const uint8_t* PartShard(const std::string& head, const PartHeader& header,
                         const std::vector<Region>& regions, uint64_t offset, uint8_t* scratch) {
  std::memset(scratch, 0, kS);
  if (offset < head.size()) {
    std::memcpy(scratch, head.data() + offset, std::min<uint64_t>(kS, head.size() - offset));
    return scratch;
  }
  for (size_t i = 0; i < regions.size(); ++i) {
    const RegionInfo& info = header.regions[i];
    uint64_t end = info.offset + info.bytes();
    if (offset < info.offset || offset >= end) continue;
    const auto* src = static_cast<const uint8_t*>(regions[i].ptr) + (offset - info.offset);
    if (offset + kS <= end) return src;
    std::memcpy(scratch, src, end - offset);
    return scratch;
  }
  return scratch;  // alignment padding or beyond the end of the file: zeros
}

}  // namespace

std::string EccSidecarName(int rank) { return PartFileName(rank) + ".ecc"; }

std::optional<RsCodeId> EccCodeFor(EccMode mode) {
  switch (mode) {
    case EccMode::kNormal:
      return RsCodeId::kRs36_32;
    case EccMode::kStrong:
      return RsCodeId::kRs19_16;
    case EccMode::kNone:
      break;
  }
  return std::nullopt;
}

const FileEntry* FindParityEntry(const Manifest& manifest) {
  for (const auto& f : manifest.files) {
    if (f.kind == FileKind::kParity) return &f;
  }
  return nullptr;
}

Result<FileEntry> WriteEccSidecar(Tier& tier, const PartHeader& header,
                                  const std::vector<Region>& regions, EccMode mode) {
  std::optional<RsCodeId> id = EccCodeFor(mode);
  if (!id) return Error(Code::kInvalidArgument, "ECC sidecar requested with ecc = none");
  RsCode code(*id);
  const EccGeometry g = GeometryFor(code, header.FileSize());
  const int n = g.k + g.m;
  FileEntry entry;
  entry.kind = FileKind::kParity;
  entry.name = EccSidecarName(header.rank);
  entry.size = g.FileSize();
  CAIRN_ASSIGN_OR_RETURN(auto pending,
                         tier.Create(header.name, header.version, entry.name, entry.size));
  ExtentChecksummer sum(0);
  std::string head = EncodeHeader(g);
  sum.Update(head.data(), head.size());
  CAIRN_RETURN_IF_ERROR(pending->file().Append(head.data(), head.size()));

  const std::string part_head = header.Encode();
  std::vector<uint8_t> scratch(static_cast<size_t>(g.k) * kS);
  std::vector<uint8_t> record(g.RecordBytes());
  std::vector<uint8_t*> shards(n);
  for (uint64_t s = 0; s < g.stripes; ++s) {
    for (int j = 0; j < g.k; ++j) {
      uint64_t offset = (s * g.k + j) * kS;
      // Encode only reads the data shards.
      shards[j] = const_cast<uint8_t*>(
          PartShard(part_head, header, regions, offset, scratch.data() + j * kS));
    }
    for (int p = 0; p < g.m; ++p) shards[g.k + p] = record.data() + p * kS;
    CAIRN_RETURN_IF_ERROR(code.Encode(shards, kS));
    uint8_t* crcs = record.data() + g.m * kS;
    for (int j = 0; j < n; ++j) {
      uint32_t crc = Crc32c(shards[j], kS);
      std::memcpy(crcs + 4 * j, &crc, 4);  // little-endian hosts only, as format/bytes.h
    }
    sum.Update(record.data(), record.size());
    CAIRN_RETURN_IF_ERROR(pending->file().Append(record.data(), record.size()));
  }
  entry.extents.push_back(sum.Finish());
  CAIRN_RETURN_IF_ERROR(pending->Commit());
  return entry;
}

Result<Manifest> CheckCopyForRepair(const Tier& tier, const std::string& name, int64_t version,
                                    int rank, int nranks) {
  std::string mpath = tier.FilePath(name, version, ManifestFileName(rank));
  CAIRN_ASSIGN_OR_RETURN(std::string bytes, tier.GetFile(name, version, ManifestFileName(rank)));
  CAIRN_ASSIGN_OR_RETURN(Manifest m, DecodeManifest(bytes, mpath));
  if (m.name != name || m.version != version || m.rank != rank ||
      (nranks >= 0 && m.nranks != nranks)) {
    return Error(Code::kCorrupt, "manifest '{}' describes another copy", mpath);
  }
  if (m.files.empty() || m.files.front().kind != FileKind::kPart || !FindParityEntry(m)) {
    return Error(Code::kCorrupt, "manifest '{}' lists no part file with an ECC sidecar", mpath);
  }
  for (size_t i = 1; i < m.files.size(); ++i) {
    std::string path = tier.FilePath(name, version, m.files[i].name);
    auto size = tier.env()->FileSize(path);
    if (!size.ok() || *size != m.files[i].size) {
      return Error(Code::kCorrupt, "'{}' listed in '{}' is missing or has the wrong size", path,
                   mpath);
    }
  }
  if (!tier.env()->FileExists(tier.FilePath(name, version, m.files.front().name))) {
    return Error(Code::kNotFound, "part file of '{}' is missing", mpath);
  }
  return m;
}

Result<RepairedPart> RepairPart(const Tier& tier, const std::string& name, int64_t version,
                                const FileEntry& part, const FileEntry& parity) {
  CAIRN_ASSIGN_OR_RETURN(auto ecc_file, tier.Open(name, version, parity.name));
  const std::string& ecc_path = ecc_file->path();
  if (ecc_file->size() != parity.size) {
    return Error(Code::kCorrupt, "ECC sidecar '{}' is {} bytes, its manifest says {}", ecc_path,
                 ecc_file->size(), parity.size);
  }
  // The sidecar is not checked against its block CRCs here: its per-shard
  // CRCs protect the parity, and the final check against the part's block
  // CRCs catches anything a damaged sidecar could mislead the repair into.
  std::string sidecar(parity.size, '\0');
  CAIRN_RETURN_IF_ERROR(ecc_file->ReadAt(0, sidecar.data(), sidecar.size()));
  CAIRN_ASSIGN_OR_RETURN(EccGeometry g, DecodeHeader(sidecar, ecc_path));
  if (g.part_size != part.size || g.FileSize() != parity.size) {
    return Error(Code::kCorrupt, "ECC sidecar '{}' does not describe its part file", ecc_path);
  }
  RsCode code(g.code);
  const int n = g.k + g.m;

  CAIRN_ASSIGN_OR_RETURN(auto part_file, tier.Open(name, version, part.name));
  const std::string& path = part_file->path();
  // Bytes missing from a truncated part are zeros here and their shards
  // erasures; bytes beyond the manifest's size are ignored.
  uint64_t present = std::min(part_file->size(), part.size);
  RepairedPart out;
  out.bytes.assign(g.stripes * g.k * kS, 0);
  CAIRN_RETURN_IF_ERROR(part_file->ReadAt(0, out.bytes.data(), present));

  std::vector<uint8_t*> shards(n);
  std::vector<int> erased;
  for (uint64_t s = 0; s < g.stripes; ++s) {
    uint8_t* record = reinterpret_cast<uint8_t*>(sidecar.data()) + kEccHeaderSize +
                      s * g.RecordBytes();
    const uint8_t* crcs = record + g.m * kS;
    erased.clear();
    for (int j = 0; j < n; ++j) {
      shards[j] = j < g.k ? out.bytes.data() + (s * g.k + j) * kS : record + (j - g.k) * kS;
      uint32_t stored;
      std::memcpy(&stored, crcs + 4 * j, 4);
      uint64_t offset = (s * g.k + j) * kS;
      // Lost to a truncation: some of [offset, offset + kS) that the file
      // should hold lies beyond what it holds.
      bool truncated = j < g.k && offset < part.size && std::min(offset + kS, part.size) > present;
      if (truncated || Crc32c(shards[j], kS) != stored) erased.push_back(j);
    }
    auto uncorrectable = [&](const std::string& why) {
      return Error(Code::kCorrupt, "'{}': stripe {} (bytes {}..{}) is uncorrectable: {}", path, s,
                   s * g.k * kS, (s + 1) * g.k * kS, why);
    };
    if (erased.empty()) {
      // No CRC points at a shard: the syndromes may still find one bad shard
      // whose CRC happens to match (a CRC32C collision).
      CAIRN_ASSIGN_OR_RETURN(DecodeReport report, code.Correct(shards, kS));
      if (!report.ok()) return uncorrectable("errors beyond one shard with matching CRCs");
      int fixed = 0;
      for (uint64_t c : report.corrected_by_shard) fixed += c > 0;
      out.shards_corrected += fixed;
      out.stripes_repaired += fixed > 0;
      continue;
    }
    if (static_cast<int>(erased.size()) > g.m) {
      return uncorrectable(fmt::format("{} shards fail their CRC32C, the code rebuilds {}",
                                       erased.size(), g.m));
    }
    CAIRN_RETURN_IF_ERROR(code.Rebuild(shards, kS, erased));
    if (static_cast<int>(erased.size()) < g.m) {
      // Spare parity left: the rebuilt stripe must be a codeword.
      CAIRN_ASSIGN_OR_RETURN(DecodeReport report, code.Check(shards, kS));
      if (report.clean != kS) return uncorrectable("inconsistent after rebuilding");
    }
    out.shards_corrected += erased.size();
    ++out.stripes_repaired;
  }
  out.bytes.resize(part.size);
  for (const Extent& e : part.extents) {
    CAIRN_RETURN_IF_ERROR(VerifyExtentRange(e, e.offset, out.bytes.data() + e.offset, e.length, path)
                              .Annotate("after ECC repair"));
  }
  return out;
}

}  // namespace cairn
