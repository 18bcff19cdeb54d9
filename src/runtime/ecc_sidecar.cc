#include "runtime/ecc_sidecar.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <new>

#include "codec/crc32c.h"
#include "format/layout.h"
#include "runtime/catalog.h"

namespace cairn {
namespace {

constexpr uint64_t kS = kEccShardSize;

}  // namespace

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

Result<std::unique_ptr<EccSidecarWriter>> EccSidecarWriter::Start(Tier& tier,
                                                                   const PartHeader& header,
                                                                   EccMode mode) {
  return Start(tier, header.name, header.version, header.rank, header.FileSize(), mode);
}

Result<std::unique_ptr<EccSidecarWriter>> EccSidecarWriter::Start(Tier& tier,
                                                                   const std::string& name,
                                                                   int64_t version, int rank,
                                                                   uint64_t part_size,
                                                                   EccMode mode) {
  std::optional<RsCodeId> id = EccCodeFor(mode);
  if (!id) return Error(Code::kInvalidArgument, "ECC sidecar requested with ecc = none");
  RsCode code(*id);
  const EccGeometry g = EccGeometryFor(code, part_size);
  FileEntry entry;
  entry.kind = FileKind::kParity;
  entry.name = EccSidecarName(rank);
  entry.size = g.FileSize();
  CAIRN_ASSIGN_OR_RETURN(auto pending, tier.Create(name, version, entry.name, entry.size));
  auto writer = std::unique_ptr<EccSidecarWriter>(
      new EccSidecarWriter(std::move(code), g, std::move(pending), std::move(entry)));
  std::string head = EncodeEccHeader(g);
  writer->sum_.Update(head.data(), head.size());
  CAIRN_RETURN_IF_ERROR(writer->pending_->file().Append(head.data(), head.size()));
  return writer;
}

EccSidecarWriter::EccSidecarWriter(RsCode code, const EccGeometry& geometry,
                                   std::unique_ptr<PendingFile> pending, FileEntry entry)
    : code_(std::move(code)), geometry_(geometry), pending_(std::move(pending)),
      entry_(std::move(entry)),
      stripe_(static_cast<size_t>(geometry.k) * kS),
      record_(geometry.RecordBytes()),
      shards_(static_cast<size_t>(geometry.k + geometry.m)) {
  for (int p = 0; p < geometry_.m; ++p) {
    shards_[static_cast<size_t>(geometry_.k + p)] = record_.data() + geometry_.ParityOffset(p);
  }
}

EccSidecarWriter::~EccSidecarWriter() = default;

Status EccSidecarWriter::EncodeStripe(const uint8_t* data) {
  if (stripes_written_ == geometry_.stripes) {
    return Error(Code::kInternal, "'{}': more stripes than the part's {}", entry_.name,
                 geometry_.stripes);
  }
  // Encode only reads the data shards.
  for (int j = 0; j < geometry_.k; ++j) {
    shards_[static_cast<size_t>(j)] = const_cast<uint8_t*>(data) + static_cast<size_t>(j) * kS;
  }
  CAIRN_RETURN_IF_ERROR(code_.Encode(shards_, kS));
  for (int j = 0; j < geometry_.k + geometry_.m; ++j) {
    geometry_.SetShardCrc(record_.data(), j, Crc32c(shards_[static_cast<size_t>(j)], kS));
  }
  sum_.Update(record_.data(), record_.size());
  ++stripes_written_;
  return pending_->file().Append(record_.data(), record_.size());
}

Status EccSidecarWriter::Add(const uint8_t* data, uint64_t n) {
  const uint64_t stripe = stripe_.size();
  seen_ += n;
  while (n > 0) {
    if (filled_ == 0 && n >= stripe) {
      // A whole stripe where the caller has it: encoded in place.
      CAIRN_RETURN_IF_ERROR(EncodeStripe(data));
      data += stripe;
      n -= stripe;
      continue;
    }
    const uint64_t take = std::min(n, stripe - filled_);
    std::memcpy(stripe_.data() + filled_, data, take);
    filled_ += take;
    data += take;
    n -= take;
    if (filled_ == stripe) {
      CAIRN_RETURN_IF_ERROR(EncodeStripe(stripe_.data()));
      filled_ = 0;
    }
  }
  return Status::Ok();
}

Result<FileEntry> EccSidecarWriter::Commit() {
  if (seen_ != geometry_.part_size) {
    return Error(Code::kInternal, "'{}': {} part bytes encoded, the part has {}", entry_.name,
                 seen_, geometry_.part_size);
  }
  if (filled_ > 0) {
    // The last stripe, padded with zeros (which are never stored).
    std::memset(stripe_.data() + filled_, 0, stripe_.size() - filled_);
    CAIRN_RETURN_IF_ERROR(EncodeStripe(stripe_.data()));
    filled_ = 0;
  }
  CAIRN_RETURN_IF_ERROR(pending_->Commit());
  entry_.extents.push_back(sum_.Finish());
  return entry_;
}

Result<FileEntry> WriteEccSidecar(Tier& tier, const PartHeader& header,
                                  const std::vector<Region>& regions, EccMode mode) {
  CAIRN_ASSIGN_OR_RETURN(auto writer, EccSidecarWriter::Start(tier, header, mode));
  CAIRN_RETURN_IF_ERROR(ObservePart(header, regions, *writer));
  return writer->Commit();
}

Result<Manifest> CheckCopyForRepair(const Tier& tier, const std::string& name, int64_t version,
                                    int rank, int nranks) {
  std::string mpath = tier.FilePath(name, version, ManifestFileName(rank));
  CAIRN_ASSIGN_OR_RETURN(Manifest m, ReadManifest(tier, name, version, rank));
  if (nranks >= 0 && m.nranks != nranks) {
    return Error(Code::kCorrupt, "manifest '{}' describes a copy of a job of {} ranks", mpath,
                 m.nranks);
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

namespace {

// Checks the part's bytes against the block CRCs of its manifest entry as
// they stream past in file order, in pieces that may cut blocks anywhere: a
// block is compared once its last byte has arrived, a running CRC32C
// carrying it across pieces. Bytes outside every extent (alignment padding)
// carry no data and are not checked, as in StreamVerified.
class StreamingBlockCheck {
 public:
  StreamingBlockCheck(const FileEntry& part, std::string origin) : origin_(std::move(origin)) {
    for (const auto& e : part.extents) extents_.push_back(&e);
    std::sort(extents_.begin(), extents_.end(),
              [](const Extent* a, const Extent* b) { return a->offset < b->offset; });
  }

  // REQUIRES: offset is where the previous piece ended (0 at first).
  // Returns the first block of the piece that fails, after checking every
  // block the piece completes (so that a scan can go on past it).
  Status Update(uint64_t offset, const uint8_t* data, uint64_t n) {
    Status first_failure;
    const uint64_t end = offset + n;
    while (offset < end && next_ < extents_.size()) {
      const Extent& e = *extents_[next_];
      const uint64_t extent_end = e.offset + e.length;
      if (e.offset < covered_) return Corrupt("overlapping extents");
      if (offset < e.offset) {  // padding before the extent
        uint64_t skip = std::min(end, e.offset) - offset;
        offset += skip;
        data += skip;
        continue;
      }
      if (block_ >= e.crcs.size()) return Corrupt("an extent lacks block CRCs");
      const uint64_t block_end = std::min(e.offset + (block_ + 1) * kBlockSize, extent_end);
      const uint64_t take = std::min(end, block_end) - offset;
      crc_ = Crc32c(data, take, crc_);
      offset += take;
      data += take;
      if (offset < block_end) break;
      if (crc_ != e.crcs[block_] && first_failure.ok()) {
        first_failure = Error(Code::kCorrupt, "'{}': block {} (bytes {}..{}) fails its CRC32C",
                              origin_, block_, e.offset + block_ * kBlockSize, block_end);
      }
      crc_ = 0;
      if (block_end == extent_end) {
        covered_ = extent_end;
        ++next_;
        block_ = 0;
      } else {
        ++block_;
      }
    }
    // Empty extents have no block to wait for.
    while (next_ < extents_.size() && extents_[next_]->length == 0) ++next_;
    return first_failure;
  }

  // Every block has been checked.
  Status Finish() const {
    return next_ == extents_.size() ? Status::Ok() : Corrupt("extents reach beyond the file");
  }

 private:
  Status Corrupt(const char* why) const {
    return Error(Code::kCorrupt, "'{}': {}", origin_, why);
  }

  std::string origin_;
  std::vector<const Extent*> extents_;  // by offset
  size_t next_ = 0;                     // the extent being checked
  uint64_t block_ = 0;                  // its block being checked
  uint64_t covered_ = 0;                // end of the last extent checked
  uint32_t crc_ = 0;                    // of the block's bytes so far
};

enum class StripeVerdict { kClean, kRepaired, kUncorrectable };

struct StripeRepair {
  StripeVerdict verdict = StripeVerdict::kClean;
  uint64_t corrected = 0;  // shards, when kRepaired
  std::string why;         // what makes it kUncorrectable
};

// One part and its sidecar, opened for repair: reads, repairs and hands out
// one stripe at a time.
class PartRepair {
 public:
  static Result<std::unique_ptr<PartRepair>> Open(const Tier& tier, const std::string& name,
                                                  int64_t version, const FileEntry& part,
                                                  const FileEntry& parity) {
    auto r = std::unique_ptr<PartRepair>(new PartRepair(part));
    CAIRN_ASSIGN_OR_RETURN(r->ecc_file_, tier.Open(name, version, parity.name));
    const std::string& ecc_path = r->ecc_file_->path();
    if (r->ecc_file_->size() != parity.size) {
      return Error(Code::kCorrupt, "ECC sidecar '{}' is {} bytes, its manifest says {}", ecc_path,
                   r->ecc_file_->size(), parity.size);
    }
    // The sidecar is not checked against its block CRCs: its per-shard CRCs
    // protect the parity, and the part's block CRCs catch anything a damaged
    // sidecar could mislead the repair into.
    std::string head(std::min<uint64_t>(kEccHeaderSize, parity.size), '\0');
    CAIRN_RETURN_IF_ERROR(r->ecc_file_->ReadAt(0, head.data(), head.size()));
    CAIRN_ASSIGN_OR_RETURN(r->g_, DecodeEccHeader(head, ecc_path));
    if (r->g_.part_size != part.size || r->g_.FileSize() != parity.size) {
      return Error(Code::kCorrupt, "ECC sidecar '{}' does not describe its part file", ecc_path);
    }
    r->code_ = std::make_unique<RsCode>(r->g_.code);
    CAIRN_ASSIGN_OR_RETURN(r->part_file_, tier.Open(name, version, part.name));
    // Bytes missing from a truncated part are zeros and their shards
    // erasures; bytes beyond the manifest's size are ignored.
    r->present_ = std::min(r->part_file_->size(), part.size);
    r->stripe_.resize(static_cast<size_t>(r->g_.k) * kS);
    r->record_.resize(r->g_.RecordBytes());
    r->shards_.resize(r->g_.k + r->g_.m);
    return r;
  }

  const std::string& path() const { return part_file_->path(); }
  uint64_t stripes() const { return g_.stripes; }
  uint64_t StripeBegin(uint64_t s) const { return g_.StripeBegin(s); }
  uint64_t StripeEnd(uint64_t s) const { return std::min(StripeBegin(s + 1), part_size_); }
  // The stripe's part bytes, [StripeBegin(s), StripeEnd(s)), after Repair(s).
  const uint8_t* data() const { return stripe_.data(); }
  // Shards failing their CRC32C in the stripe last repaired.
  size_t erased() const { return erased_.size(); }

  // Reads stripe s and repairs it in the stripe buffer.
  Result<StripeRepair> Repair(uint64_t s) {
    const int k = g_.k, m = g_.m;
    CAIRN_RETURN_IF_ERROR(
        ecc_file_->ReadAt(g_.RecordOffset(s), record_.data(), record_.size()));
    const uint64_t begin = StripeBegin(s);
    const uint64_t have = std::min(StripeEnd(s), present_) - std::min(begin, present_);
    if (have > 0) CAIRN_RETURN_IF_ERROR(part_file_->ReadAt(begin, stripe_.data(), have));
    std::memset(stripe_.data() + have, 0, stripe_.size() - have);
    erased_.clear();
    for (int j = 0; j < k + m; ++j) {
      shards_[j] = j < k ? stripe_.data() + j * kS : record_.data() + g_.ParityOffset(j - k);
      const uint32_t stored = g_.ShardCrc(record_.data(), j);
      const uint64_t offset = begin + j * kS;
      // Lost to a truncation: some of [offset, offset + kS) that the file
      // should hold lies beyond what it holds.
      bool truncated = j < k && offset < part_size_ && std::min(offset + kS, part_size_) > present_;
      if (truncated || Crc32c(shards_[j], kS) != stored) erased_.push_back(j);
    }
    StripeRepair out;
    auto uncorrectable = [&](std::string why) {
      out.verdict = StripeVerdict::kUncorrectable;
      out.why = std::move(why);
      return out;
    };
    if (erased_.empty()) {
      // No CRC points at a shard: the syndromes may still find one bad shard
      // whose CRC happens to match (a CRC32C collision).
      CAIRN_ASSIGN_OR_RETURN(DecodeReport report, code_->Correct(shards_, kS));
      if (!report.ok()) return uncorrectable("errors beyond one shard with matching CRCs");
      for (uint64_t c : report.corrected_by_shard) out.corrected += c > 0;
      if (out.corrected > 0) out.verdict = StripeVerdict::kRepaired;
      return out;
    }
    if (static_cast<int>(erased_.size()) > m) {
      return uncorrectable(
          fmt::format("{} shards fail their CRC32C, the code rebuilds {}", erased_.size(), m));
    }
    CAIRN_RETURN_IF_ERROR(code_->Rebuild(shards_, kS, erased_));
    if (static_cast<int>(erased_.size()) < m) {
      // Spare parity left: the rebuilt stripe must be a codeword.
      CAIRN_ASSIGN_OR_RETURN(DecodeReport report,
                             code_->Check({shards_.data(), shards_.size()}, kS));
      if (report.clean != kS) return uncorrectable("inconsistent after rebuilding");
    }
    out.verdict = StripeVerdict::kRepaired;
    out.corrected = erased_.size();
    return out;
  }

  Status Uncorrectable(uint64_t s, const std::string& why) const {
    return Error(Code::kCorrupt, "'{}': stripe {} (bytes {}..{}) is uncorrectable: {}", path(), s,
                 StripeBegin(s), StripeBegin(s + 1), why);
  }

 private:
  explicit PartRepair(const FileEntry& part) : part_size_(part.size) {}

  uint64_t part_size_;
  EccGeometry g_;
  std::unique_ptr<RsCode> code_;
  std::unique_ptr<ReadableFile> ecc_file_;
  std::unique_ptr<ReadableFile> part_file_;
  uint64_t present_ = 0;
  std::vector<uint8_t> stripe_;   // k data shards
  std::vector<uint8_t> record_;   // the stripe's sidecar record: m parity shards, CRCs
  std::vector<uint8_t*> shards_;  // into stripe_ and record_
  std::vector<int> erased_;
};

// Repairs every stripe of an opened part in order, handing each to `sink`.
Result<EccRepairCounts> RepairStripes(PartRepair* repair, const FileEntry& part,
                                      const RepairSink& sink) {
  StreamingBlockCheck check(part, repair->path());
  EccRepairCounts counts;
  for (uint64_t s = 0; s < repair->stripes(); ++s) {
    CAIRN_ASSIGN_OR_RETURN(StripeRepair r, repair->Repair(s));
    if (r.verdict == StripeVerdict::kUncorrectable) return repair->Uncorrectable(s, r.why);
    counts.shards_corrected += r.corrected;
    counts.stripes_repaired += r.verdict == StripeVerdict::kRepaired;
    const uint64_t begin = repair->StripeBegin(s), n = repair->StripeEnd(s) - begin;
    CAIRN_RETURN_IF_ERROR(check.Update(begin, repair->data(), n).Annotate("after ECC repair"));
    CAIRN_RETURN_IF_ERROR(sink(begin, repair->data(), n));
  }
  CAIRN_RETURN_IF_ERROR(check.Finish());
  return counts;
}

}  // namespace

Result<EccRepairCounts> RepairPartStreaming(const Tier& tier, const std::string& name,
                                            int64_t version, const FileEntry& part,
                                            const FileEntry& parity, const RepairSink& sink) {
  CAIRN_ASSIGN_OR_RETURN(auto repair, PartRepair::Open(tier, name, version, part, parity));
  return RepairStripes(repair.get(), part, sink);
}

Result<RepairedPart> RepairPart(const Tier& tier, const std::string& name, int64_t version,
                                const FileEntry& part, const FileEntry& parity) {
  // Open first: it holds part.size, a number read from storage, to the
  // sidecar's geometry and the sidecar's to the real file's size, so the
  // buffer below is bounded by what is on the tier, not by a manifest.
  CAIRN_ASSIGN_OR_RETURN(auto repair, PartRepair::Open(tier, name, version, part, parity));
  RepairedPart out;
  // Filled by appending, so that no byte of it is written twice. A part
  // larger than the memory left is this copy's failure, not the process's.
  try {
    out.bytes.reserve(part.size);
  } catch (const std::bad_alloc&) {
    return Error(Code::kNoSpace, "no memory for the {} bytes of '{}' to repair it", part.size,
                 repair->path());
  }
  CAIRN_ASSIGN_OR_RETURN(EccRepairCounts counts,
                         RepairStripes(repair.get(), part,
                                       [&](uint64_t, const uint8_t* data, uint64_t n) {
                                         out.bytes.insert(out.bytes.end(), data, data + n);
                                         return Status::Ok();
                                       }));
  out.shards_corrected = counts.shards_corrected;
  out.stripes_repaired = counts.stripes_repaired;
  return out;
}

Result<EccScan> ScanPart(const Tier& tier, const std::string& name, int64_t version,
                         const FileEntry& part, const FileEntry& parity) {
  CAIRN_ASSIGN_OR_RETURN(auto repair, PartRepair::Open(tier, name, version, part, parity));
  StreamingBlockCheck check(part, repair->path());
  EccScan scan;
  auto note = [&](Status s) {
    if (scan.status.ok()) scan.status = std::move(s);
  };
  for (uint64_t s = 0; s < repair->stripes(); ++s) {
    CAIRN_ASSIGN_OR_RETURN(StripeRepair r, repair->Repair(s));
    if (r.verdict == StripeVerdict::kUncorrectable) {
      ++scan.stripes_uncorrectable;
      scan.shards_uncorrectable += repair->erased();
      note(repair->Uncorrectable(s, r.why));
    }
    scan.shards_corrected += r.corrected;
    scan.stripes_repaired += r.verdict == StripeVerdict::kRepaired;
    // An uncorrectable stripe still streams past the check (its blocks then
    // fail, after the stripe's own, earlier reason), so that later blocks
    // are checked too.
    const uint64_t begin = repair->StripeBegin(s);
    Status checked = check.Update(begin, repair->data(), repair->StripeEnd(s) - begin);
    if (!checked.ok()) note(checked.Annotate("after ECC repair"));
  }
  note(check.Finish());
  return scan;
}

namespace {

// The committed part is read for the background encode in pieces of this
// many bytes: whole stripes of both codes (128 and 64 KiB), small enough to
// stay in cache from the CRC check to the encode.
constexpr uint64_t kEncodePiece = uint64_t{1} << 20;

}  // namespace

Result<FileEntry> EncodeCommittedSidecar(Tier& tier, const Manifest& committed, EccMode mode) {
  if (committed.files.empty() || committed.files.front().kind != FileKind::kPart) {
    return Error(Code::kInternal, "rank {}'s copy of '{}' version {} lists no part file",
                 committed.rank, committed.name, committed.version);
  }
  const FileEntry& part = committed.files.front();
  CAIRN_ASSIGN_OR_RETURN(auto file, tier.Open(committed.name, committed.version, part.name));
  if (file->size() != part.size) {
    return Error(Code::kCorrupt, "'{}' has {} bytes, its manifest says {}", file->path(),
                 file->size(), part.size);
  }
  CAIRN_ASSIGN_OR_RETURN(auto writer,
                         EccSidecarWriter::Start(tier, committed.name, committed.version,
                                                 committed.rank, part.size, mode));
  StreamingBlockCheck check(part, file->path());
  std::vector<uint8_t> piece(std::min(kEncodePiece, part.size));
  for (uint64_t at = 0; at < part.size; at += piece.size()) {
    const uint64_t n = std::min<uint64_t>(piece.size(), part.size - at);
    CAIRN_RETURN_IF_ERROR(file->ReadAt(at, piece.data(), n));
    CAIRN_RETURN_IF_ERROR(check.Update(at, piece.data(), n));
    CAIRN_RETURN_IF_ERROR(writer->Add(piece.data(), n));
  }
  CAIRN_RETURN_IF_ERROR(check.Finish());
  return writer->Commit();
}

}  // namespace cairn
