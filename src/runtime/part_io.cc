#include "runtime/part_io.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <numeric>

#include "format/layout.h"

namespace cairn {
namespace {

// Work in pieces of whole blocks: large enough to amortize system calls,
// small enough that a piece is still in cache when it is checksummed.
constexpr uint64_t kChunk = 16 * kBlockSize;
constexpr uint64_t kDeviceChunk = 16 * kChunk;

// Writes one piece of a part file, adding it to its extent's block CRCs
// (`sum`; null for padding). Into a mapped slot (the memory tier) the copy
// and the CRC are one pass (CopyWithCrc32c), with streaming stores: the
// part is not read again soon, so they neither read each destination line
// first nor evict the application's data; elsewhere the CRC, then Append.
Status WritePiece(WritableFile& file, ExtentChecksummer* sum, const uint8_t* data, uint64_t n) {
  if (sum == nullptr) return file.Append(data, n);
  if (uint8_t* slot = file.Claim(n)) {
    sum->CopyAndUpdate(slot, data, n, CopyStores::kStreaming);
    return Status::Ok();
  }
  sum->Update(data, n);
  return file.Append(data, n);
}

// The bytes of a part file in file order, in pieces of at most kChunk:
// piece(extent, data, n) with `extent` the index of the manifest extent
// the bytes belong to (0: the header `head`, i + 1: region i) or -1 for
// alignment padding (zeros). Regions go in offset order, which the layout
// need not share with their order (it packs small regions first).
using PartPiece = std::function<Status(int extent, const uint8_t* data, uint64_t n)>;
Status EmitPart(const PartHeader& header, const std::string& head,
                const std::vector<Region>& regions, const PartPiece& piece) {
  static const uint8_t kZeros[kRegionAlign] = {};
  auto emit = [&](int extent, const uint8_t* data, uint64_t n) -> Status {
    const uint64_t max_piece = data == kZeros ? sizeof(kZeros) : kChunk;
    for (uint64_t pos = 0; pos < n; pos += max_piece) {
      CAIRN_RETURN_IF_ERROR(
          piece(extent, data == kZeros ? data : data + pos, std::min(max_piece, n - pos)));
    }
    return Status::Ok();
  };
  CAIRN_RETURN_IF_ERROR(emit(0, reinterpret_cast<const uint8_t*>(head.data()), head.size()));
  std::vector<size_t> by_offset(regions.size());
  std::iota(by_offset.begin(), by_offset.end(), 0);
  std::sort(by_offset.begin(), by_offset.end(), [&](size_t a, size_t b) {
    return header.regions[a].offset < header.regions[b].offset;
  });
  uint64_t pos = head.size();
  for (size_t i : by_offset) {
    const RegionInfo& info = header.regions[i];
    CAIRN_RETURN_IF_ERROR(emit(-1, kZeros, info.offset - pos));
    CAIRN_RETURN_IF_ERROR(emit(static_cast<int>(i) + 1,
                               static_cast<const uint8_t*>(regions[i].ptr), info.bytes()));
    pos = info.offset + info.bytes();
  }
  return Status::Ok();
}

// Streams a committed file in order: each piece of an extent is verified
// before `sink` sees it; bytes between extents (alignment padding) pass
// unverified, since they carry no data.
Status StreamVerified(const ReadableFile& file, const FileEntry& entry,
                      const std::function<Status(uint64_t, const uint8_t*, uint64_t)>& sink) {
  if (file.size() != entry.size) {
    return Error(Code::kCorrupt, "'{}' is {} bytes, its manifest says {}", file.path(),
                 file.size(), entry.size);
  }
  std::vector<uint8_t> buffer(kChunk);
  uint64_t pos = 0;
  auto copy_range = [&](uint64_t end, const Extent* extent) -> Status {
    while (pos < end) {
      uint64_t take = std::min(kChunk, end - pos);
      CAIRN_RETURN_IF_ERROR(file.ReadAt(pos, buffer.data(), take));
      if (extent != nullptr) {
        CAIRN_RETURN_IF_ERROR(VerifyExtentRange(*extent, pos, buffer.data(), take, file.path()));
      }
      CAIRN_RETURN_IF_ERROR(sink(pos, buffer.data(), take));
      pos += take;
    }
    return Status::Ok();
  };
  std::vector<const Extent*> extents;
  for (const auto& e : entry.extents) extents.push_back(&e);
  std::sort(extents.begin(), extents.end(),
            [](const Extent* a, const Extent* b) { return a->offset < b->offset; });
  for (const Extent* e : extents) {
    if (e->offset < pos) return Error(Code::kCorrupt, "'{}': overlapping extents", file.path());
    CAIRN_RETURN_IF_ERROR(copy_range(e->offset, nullptr));
    CAIRN_RETURN_IF_ERROR(copy_range(e->offset + e->length, e));
  }
  return copy_range(entry.size, nullptr);
}

// The header of a part file agrees with its manifest entry.
Status CheckHeaderAgainstEntry(const PartHeader& header, const std::string& name,
                               int64_t version, const FileEntry& entry, const std::string& path) {
  if (header.name != name || header.version != version) {
    return Error(Code::kCorrupt, "'{}' holds '{}' version {}, expected '{}' version {}", path,
                 header.name, header.version, name, version);
  }
  if (header.FileSize() != entry.size ||
      entry.extents.size() != header.regions.size() + 1) {
    return Error(Code::kCorrupt, "'{}': region table disagrees with its manifest", path);
  }
  for (size_t i = 0; i < header.regions.size(); ++i) {
    const Extent& e = entry.extents[i + 1];
    if (e.offset != header.regions[i].offset || e.length != header.regions[i].bytes()) {
      return Error(Code::kCorrupt, "'{}': region {} disagrees with its manifest", path, i);
    }
  }
  return Status::Ok();
}

// The part's first extent, which holds exactly its header. Its length is
// read into a buffer: bounded here by the file's size (which the caller
// checked against the real file) and by the longest header there can be.
Result<const Extent*> HeaderExtent(const FileEntry& entry, const std::string& origin) {
  if (entry.extents.empty() || entry.extents[0].offset != 0 ||
      entry.extents[0].length > entry.size) {
    return Error(Code::kCorrupt, "'{}': its manifest lists no header extent", origin);
  }
  if (entry.extents[0].length > kMaxPartHeaderBytes) {
    return Error(Code::kCorrupt, "'{}': its manifest gives the header {} bytes, at most {} can be",
                 origin, entry.extents[0].length, kMaxPartHeaderBytes);
  }
  return &entry.extents[0];
}

// Decodes a header whose bytes were checked against the manifest, and
// checks that it describes what the manifest entry does.
Result<PartHeader> DecodeCheckedHeader(const std::string& head, const std::string& name,
                                       int64_t version, const FileEntry& entry,
                                       const std::string& origin) {
  CAIRN_ASSIGN_OR_RETURN(uint64_t size, PartHeaderSize(head.substr(0, 16), origin));
  if (size != head.size()) {
    return Error(Code::kCorrupt, "'{}': header is {} bytes, its manifest says {}", origin, size,
                 head.size());
  }
  CAIRN_ASSIGN_OR_RETURN(PartHeader header, DecodePartHeader(head, origin));
  CAIRN_RETURN_IF_ERROR(CheckHeaderAgainstEntry(header, name, version, entry, origin));
  return header;
}

// Copies each region's extent of a checked part, laid out as the file is
// (`part` is its first byte), into application memory.
void CopyRegionsFrom(const uint8_t* part, const FileEntry& entry,
                     const std::vector<Region>& regions) {
  for (size_t i = 0; i < regions.size(); ++i) {
    const Extent& extent = entry.extents[i + 1];
    std::memcpy(regions[i].ptr, part + extent.offset, extent.length);
  }
}

// Checks every extent of a part held whole in memory.
Status VerifyExtentsInPlace(const uint8_t* part, const FileEntry& entry,
                            const std::string& origin) {
  for (const Extent& e : entry.extents) {
    CAIRN_RETURN_IF_ERROR(VerifyExtentRange(e, e.offset, part + e.offset, e.length, origin));
  }
  return Status::Ok();
}

}  // namespace

Status AppendChecksummed(WritableFile& file, ExtentChecksummer& sum, const uint8_t* data,
                         uint64_t n) {
  for (uint64_t pos = 0; pos < n; pos += kChunk) {
    CAIRN_RETURN_IF_ERROR(WritePiece(file, &sum, data + pos, std::min(kChunk, n - pos)));
  }
  return Status::Ok();
}

PartHeader MakePartHeader(const std::string& name, int64_t version, int rank, int nranks,
                          const std::vector<Region>& regions) {
  PartHeader h;
  h.name = name;
  h.version = version;
  h.rank = rank;
  h.nranks = nranks;
  for (const auto& r : regions) h.regions.push_back({r.id, r.elem_size, r.count, 0});
  h.Layout();
  return h;
}

Result<FileEntry> WritePart(Tier& tier, const PartHeader& header,
                            const std::vector<Region>& regions, PartObserver* observer) {
  FileEntry entry;
  entry.kind = FileKind::kPart;
  entry.name = PartFileName(header.rank);
  entry.size = header.FileSize();
  CAIRN_ASSIGN_OR_RETURN(auto pending,
                         tier.Create(header.name, header.version, entry.name, entry.size));
  WritableFile& file = pending->file();
  // Extents stay in region order (extent i + 1 is region i).
  std::vector<ExtentChecksummer> sums;
  sums.emplace_back(0);
  for (const RegionInfo& info : header.regions) sums.emplace_back(info.offset);
  // Each piece is checksummed, copied and observed in turn, while in cache.
  CAIRN_RETURN_IF_ERROR(EmitPart(
      header, header.Encode(), regions, [&](int extent, const uint8_t* data, uint64_t n) {
        CAIRN_RETURN_IF_ERROR(WritePiece(file, extent >= 0 ? &sums[static_cast<size_t>(extent)]
                                                           : nullptr,
                                         data, n));
        return observer != nullptr ? observer->Add(data, n) : Status::Ok();
      }));
  for (ExtentChecksummer& sum : sums) entry.extents.push_back(sum.Finish());
  CAIRN_RETURN_IF_ERROR(pending->Commit());
  return entry;
}

Status ObservePart(const PartHeader& header, const std::vector<Region>& regions,
                   PartObserver& observer) {
  return EmitPart(header, header.Encode(), regions,
                  [&](int, const uint8_t* data, uint64_t n) { return observer.Add(data, n); });
}

Result<FileEntry> WriteRoutedFile(Tier& tier, const std::string& name, int64_t version,
                                  const std::string& file, const std::string& logical,
                                  const std::string& source) {
  Env* env = tier.env();
  CAIRN_ASSIGN_OR_RETURN(auto in, env->NewReadableFile(source));
  FileEntry entry;
  entry.kind = FileKind::kRouted;
  entry.name = file;
  entry.logical = logical;
  entry.size = in->size();
  CAIRN_ASSIGN_OR_RETURN(auto pending, tier.Create(name, version, file, entry.size));
  std::vector<uint8_t> buffer(kChunk);
  ExtentChecksummer sum(0);
  for (uint64_t pos = 0; pos < entry.size; pos += kChunk) {
    uint64_t take = std::min(kChunk, entry.size - pos);
    CAIRN_RETURN_IF_ERROR(in->ReadAt(pos, buffer.data(), take));
    CAIRN_RETURN_IF_ERROR(AppendChecksummed(pending->file(), sum, buffer.data(), take));
  }
  entry.extents.push_back(sum.Finish());
  CAIRN_RETURN_IF_ERROR(pending->Commit());
  return entry;
}

Result<PartHeader> ReadPartHeader(const Tier& tier, const std::string& name, int64_t version,
                                  const FileEntry& entry) {
  CAIRN_ASSIGN_OR_RETURN(auto file, tier.Open(name, version, entry.name));
  const std::string& path = file->path();
  if (file->size() != entry.size) {
    return Error(Code::kCorrupt, "'{}' is {} bytes, its manifest says {}", path, file->size(),
                 entry.size);
  }
  CAIRN_ASSIGN_OR_RETURN(const Extent* extent, HeaderExtent(entry, path));
  // One read: the manifest knows the header's length, and its block CRCs
  // are checked here so that ReadPartInto need not read the header again.
  std::string head(extent->length, '\0');
  CAIRN_RETURN_IF_ERROR(file->ReadAt(0, head.data(), head.size()));
  CAIRN_RETURN_IF_ERROR(VerifyExtentRange(*extent, 0, head.data(), head.size(), path));
  return DecodeCheckedHeader(head, name, version, entry, path);
}

Result<PartHeader> PartHeaderFromBuffer(const std::vector<uint8_t>& bytes, const std::string& name,
                                        int64_t version, const FileEntry& entry,
                                        const std::string& origin) {
  if (bytes.size() != entry.size) {
    return Error(Code::kCorrupt, "'{}' is {} bytes, its manifest says {}", origin, bytes.size(),
                 entry.size);
  }
  CAIRN_ASSIGN_OR_RETURN(const Extent* extent, HeaderExtent(entry, origin));
  CAIRN_RETURN_IF_ERROR(VerifyExtentRange(*extent, 0, bytes.data(), extent->length, origin));
  std::string head(reinterpret_cast<const char*>(bytes.data()), extent->length);
  return DecodeCheckedHeader(head, name, version, entry, origin);
}

Status CheckRegionsMatch(const PartHeader& header, const std::vector<Region>& regions) {
  if (header.regions.size() != regions.size()) {
    return Error(Code::kMismatch,
                 "checkpoint '{}' version {} (rank {}) has {} regions, {} are protected",
                 header.name, header.version, header.rank, header.regions.size(), regions.size());
  }
  for (size_t i = 0; i < regions.size(); ++i) {
    const RegionInfo& saved = header.regions[i];
    const Region& now = regions[i];
    if (saved.id != now.id || saved.count != now.count || saved.elem_size != now.elem_size) {
      return Error(Code::kMismatch,
                   "checkpoint '{}' version {} (rank {}): saved region {} is {} x {} bytes, "
                   "protected region {} is {} x {} bytes",
                   header.name, header.version, header.rank, saved.id, saved.count,
                   saved.elem_size, now.id, now.count, now.elem_size);
    }
  }
  return Status::Ok();
}

Status CopyOutVerified(const Tier& tier, const std::string& name, int64_t version,
                       const FileEntry& entry, Env* env, const std::string& dest_path) {
  CAIRN_ASSIGN_OR_RETURN(auto in, tier.Open(name, version, entry.name));
  std::string tmp = dest_path + ".restoring";
  {
    CAIRN_ASSIGN_OR_RETURN(auto out, env->NewWritableFile(tmp, WriteOptions{}));
    Status s = StreamVerified(*in, entry, [&](uint64_t, const uint8_t* p, uint64_t n) {
      return out->Append(p, n);
    });
    if (s.ok()) s = out->Close();
    if (!s.ok()) {
      (void)env->DeleteFile(tmp);
      return s;
    }
  }
  return env->RenameFile(tmp, dest_path);
}

Status CopyBetweenTiers(const Tier& from, Tier& to, const std::string& name, int64_t version,
                        const FileEntry& entry) {
  CAIRN_ASSIGN_OR_RETURN(auto in, from.Open(name, version, entry.name));
  CAIRN_ASSIGN_OR_RETURN(auto pending, to.Create(name, version, entry.name, entry.size));
  CAIRN_RETURN_IF_ERROR(StreamVerified(*in, entry, [&](uint64_t, const uint8_t* p, uint64_t n) {
    return pending->file().Append(p, n);
  }));
  return pending->Commit();
}

Status VerifyFile(const Tier& tier, const std::string& name, int64_t version,
                  const FileEntry& entry) {
  CAIRN_ASSIGN_OR_RETURN(auto in, tier.Open(name, version, entry.name));
  return StreamVerified(*in, entry,
                        [](uint64_t, const uint8_t*, uint64_t) { return Status::Ok(); });
}

Status WriteVerifiedBuffer(Tier& to, const std::string& name, int64_t version,
                           const FileEntry& entry, const std::vector<uint8_t>& bytes) {
  if (bytes.size() != entry.size) {
    return Error(Code::kInvalidArgument, "'{}': {} bytes to write, its manifest says {}",
                 entry.name, bytes.size(), entry.size);
  }
  CAIRN_RETURN_IF_ERROR(VerifyExtentsInPlace(bytes.data(), entry, entry.name));
  CAIRN_ASSIGN_OR_RETURN(auto pending, to.Create(name, version, entry.name, entry.size));
  for (uint64_t pos = 0; pos < bytes.size(); pos += kDeviceChunk) {
    uint64_t take = std::min<uint64_t>(kDeviceChunk, bytes.size() - pos);
    CAIRN_RETURN_IF_ERROR(pending->file().Append(bytes.data() + pos, take));
  }
  return pending->Commit();
}

namespace {

// A memory-tier part, mapped read-only and checked in place. A restore
// used to read it into a private buffer in phase one and again into the
// regions in phase two: two copies and two checks, 2.6x one read(). The
// mapping's pages are the tier's own, so phase one copies nothing, and
// phase two is one memcpy. The mapping keeps the file's pages even if the
// file is renamed or deleted meanwhile, and nothing writes a committed
// part in place (a retired one is renamed into a slot first, and only the
// checkpoint pipeline, on this thread, does that).
class MappedStagedPart final : public StagedPart {
 public:
  MappedStagedPart(const Tier& tier, std::unique_ptr<MappedFile> map, const FileEntry& entry)
      : tier_(tier), map_(std::move(map)), entry_(entry) {}
  // The restart returns without waiting for the page table's teardown.
  ~MappedStagedPart() override { tier_.UnmapLater(std::move(map_)); }
  Status CopyInto(const std::vector<Region>& regions) const override {
    CopyRegionsFrom(map_->data(), entry_, regions);
    return Status::Ok();
  }

 private:
  const Tier& tier_;
  std::unique_ptr<MappedFile> map_;
  FileEntry entry_;
};

// A part on a device: read again (from the page cache phase one filled)
// and checked again in phase two.
class DeviceStagedPart final : public StagedPart {
 public:
  DeviceStagedPart(const Tier& tier, std::string name, int64_t version, const FileEntry& entry)
      : tier_(tier), name_(std::move(name)), version_(version), entry_(entry) {}
  Status CopyInto(const std::vector<Region>& regions) const override;

 private:
  const Tier& tier_;
  std::string name_;
  int64_t version_;
  FileEntry entry_;
};

Status DeviceStagedPart::CopyInto(const std::vector<Region>& regions) const {
  CAIRN_ASSIGN_OR_RETURN(auto file, tier_.Open(name_, version_, entry_.name));
  // Measured cold, 2 ranks x 256 MiB, read_ahead_kb 8192: the device's own
  // readahead is ~15% faster than the doubled window of the sequential
  // hint, and dropping each piece from the page cache once it is in the
  // regions makes the next pieces reuse those pages instead of allocating
  // fresh ones, whose cost made the time vary 2-4x on a VM. The job has its
  // state in memory now: a cached second copy of the part would only take
  // memory from it.
  file->Advise(ReadableFile::Hint::kNormal, 0, 0);
  for (size_t i = 0; i < regions.size(); ++i) {
    const Extent& extent = entry_.extents[i + 1];
    // Large reads: CRC32C runs at ~29 GB/s from DRAM, so checking a piece
    // after it arrived costs little beside the device's time.
    CAIRN_RETURN_IF_ERROR(file->ReadPieces(
        extent.offset, extent.length, static_cast<uint8_t*>(regions[i].ptr), kDeviceChunk,
        [&](uint64_t offset, const uint8_t* data, uint64_t n) {
          CAIRN_RETURN_IF_ERROR(VerifyExtentRange(extent, offset, data, n, file->path()));
          file->Advise(ReadableFile::Hint::kDone, offset, n);
          return Status::Ok();
        }));
  }
  return Status::Ok();
}

// A part held whole in memory (repaired from its sidecar).
class BufferStagedPart final : public StagedPart {
 public:
  BufferStagedPart(const std::vector<uint8_t>& bytes, const FileEntry& entry)
      : bytes_(bytes), entry_(entry) {}
  Status CopyInto(const std::vector<Region>& regions) const override {
    CopyRegionsFrom(bytes_.data(), entry_, regions);
    return Status::Ok();
  }

 private:
  const std::vector<uint8_t>& bytes_;
  FileEntry entry_;
};

Result<std::unique_ptr<StagedPart>> StageMappedPart(const Tier& tier, const std::string& name,
                                                    int64_t version, const FileEntry& entry) {
  const std::string path = tier.FilePath(name, version, entry.name);
  CAIRN_ASSIGN_OR_RETURN(auto map, tier.env()->MapFile(path, 0, /*writable=*/false));
  if (map->size() != entry.size) {
    return Error(Code::kCorrupt, "'{}' is {} bytes, its manifest says {}", path, map->size(),
                 entry.size);
  }
  // One call enters every page in the mapping, instead of a fault per few
  // pages as the check walks it.
  CAIRN_RETURN_IF_ERROR(map->Populate(0, map->size()).Annotate(path));
  CAIRN_RETURN_IF_ERROR(VerifyExtentsInPlace(map->data(), entry, path));
  return std::unique_ptr<StagedPart>(new MappedStagedPart(tier, std::move(map), entry));
}

}  // namespace

Result<std::unique_ptr<StagedPart>> StagePart(const Tier& tier, const std::string& name,
                                              int64_t version, const FileEntry& entry) {
  if (!tier.persists()) return StageMappedPart(tier, name, version, entry);
  CAIRN_ASSIGN_OR_RETURN(auto file, tier.Open(name, version, entry.name));
  // The device's own readahead, as DeviceStagedPart::CopyInto explains; no
  // page is dropped here, since phase two reads them all again.
  file->Advise(ReadableFile::Hint::kNormal, 0, 0);
  CAIRN_RETURN_IF_ERROR(StreamVerified(*file, entry, [](uint64_t, const uint8_t*, uint64_t) {
    return Status::Ok();
  }));
  return std::unique_ptr<StagedPart>(new DeviceStagedPart(tier, name, version, entry));
}

Result<std::unique_ptr<StagedPart>> StagePartBuffer(const std::vector<uint8_t>& bytes,
                                                    const std::string& name, int64_t version,
                                                    const FileEntry& entry,
                                                    const std::vector<Region>& regions,
                                                    const std::string& origin) {
  CAIRN_ASSIGN_OR_RETURN(PartHeader header,
                         PartHeaderFromBuffer(bytes, name, version, entry, origin));
  CAIRN_RETURN_IF_ERROR(CheckRegionsMatch(header, regions));
  CAIRN_RETURN_IF_ERROR(VerifyExtentsInPlace(bytes.data(), entry, origin));
  return std::unique_ptr<StagedPart>(new BufferStagedPart(bytes, entry));
}

}  // namespace cairn
