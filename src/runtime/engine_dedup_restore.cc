// EngineDedup, the restart side: reading paged part files back and
// resolving their references across ranks and versions (engine_dedup.h).
#include <algorithm>
#include <cstring>
#include <map>

#include "base/log.h"
#include "format/layout.h"
#include "runtime/engine_dedup.h"

namespace cairn {
namespace {

// A request names a page by the version whose copy stores it and its
// digest: i64 version, then kMaxDigestBytes of digest.
constexpr size_t kRequestBytes = 8 + kMaxDigestBytes;
// A response is a status byte (1: found) and page_size bytes.
constexpr uint8_t kFound = 1;

struct Request {
  int64_t version = 0;
  PageDigest digest;
  auto operator<=>(const Request&) const = default;
};

std::string EncodeRequests(const std::vector<Request>& requests) {
  std::string out(requests.size() * kRequestBytes, '\0');
  for (size_t i = 0; i < requests.size(); ++i) {
    char* p = out.data() + i * kRequestBytes;
    uint64_t v = static_cast<uint64_t>(requests[i].version);
    for (int b = 0; b < 8; ++b) p[b] = static_cast<char>(v >> (8 * b));
    std::memcpy(p + 8, requests[i].digest.bytes.data(), kMaxDigestBytes);
  }
  return out;
}

std::vector<Request> DecodeRequests(const std::vector<uint8_t>& bytes) {
  std::vector<Request> out(bytes.size() / kRequestBytes);
  for (size_t i = 0; i < out.size(); ++i) {
    const uint8_t* p = bytes.data() + i * kRequestBytes;
    uint64_t v = 0;
    for (int b = 0; b < 8; ++b) v |= uint64_t{p[b]} << (8 * b);
    out[i].version = static_cast<int64_t>(v);
    std::memcpy(out[i].digest.bytes.data(), p + 8, kMaxDigestBytes);
  }
  return out;
}

std::span<const uint8_t> AsBytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

// The pages this rank serves to one requester, in request order.
std::string Serve(const std::vector<Request>& requests, uint32_t page_size,
                  const PagedCopyLoader& load) {
  std::string out(requests.size() * (1 + size_t{page_size}), '\0');
  for (size_t i = 0; i < requests.size(); ++i) {
    char* slot = out.data() + i * (1 + size_t{page_size});
    Result<const PagedCopy*> copy = load(requests[i].version);
    if (!copy.ok() || (*copy)->header().page_size != page_size) continue;
    std::optional<size_t> page = (*copy)->Find(requests[i].digest);
    if (!page) continue;
    // A page that fails its check is not served: the requester's version
    // is then unrecoverable, never restored with other bytes.
    if (!(*copy)->ReadPages(*page, 1, reinterpret_cast<uint8_t*>(slot + 1)).ok()) continue;
    slot[0] = static_cast<char>(kFound);
  }
  return out;
}

// Where each page of the copy lands in the image.
std::vector<uint64_t> ImageOffsets(const std::vector<uint32_t>& lengths) {
  std::vector<uint64_t> offsets(lengths.size());
  uint64_t pos = 0;
  for (size_t i = 0; i < lengths.size(); ++i) {
    offsets[i] = pos;
    pos += lengths[i];
  }
  return offsets;
}

class ImageStagedPart final : public StagedPart {
 public:
  explicit ImageStagedPart(std::vector<uint8_t> image) : image_(std::move(image)) {}
  Status CopyInto(const std::vector<Region>& regions) const override {
    uint64_t pos = 0;
    for (const Region& r : regions) {
      if (pos + r.bytes() > image_.size()) {
        return Error(Code::kInternal, "restored image of {} bytes is shorter than region {}",
                     image_.size(), r.id);
      }
      if (r.bytes() > 0) std::memcpy(r.ptr, image_.data() + pos, r.bytes());
      pos += r.bytes();
    }
    return Status::Ok();
  }

 private:
  std::vector<uint8_t> image_;
};

}  // namespace

bool IsPagedPart(const Tier& tier, const std::string& name, int64_t version,
                 const FileEntry& entry) {
  auto file = tier.Open(name, version, entry.name);
  if (!file.ok() || (*file)->size() < 8) return false;
  char magic[8];
  if (!(*file)->ReadAt(0, magic, 8).ok()) return false;
  return std::memcmp(magic, kPagesMagic, 8) == 0;
}

Status CheckPagedRegions(const PagesHeader& header, const std::vector<Region>& regions) {
  if (header.regions.size() != regions.size()) {
    return Error(Code::kMismatch, "the copy holds {} regions, {} are protected",
                 header.regions.size(), regions.size());
  }
  for (size_t i = 0; i < regions.size(); ++i) {
    const PagedRegion& a = header.regions[i];
    const Region& b = regions[i];
    if (a.id != b.id || a.bytes() != b.bytes()) {
      return Error(Code::kMismatch, "region {} of {} bytes in the copy, region {} of {} protected",
                   a.id, a.bytes(), b.id, b.bytes());
    }
  }
  return Status::Ok();
}

namespace {

// The header of a pages file, its bytes checked against the extent that
// holds it: the first (format 1: the header, at 0) or the last (format 2:
// the header and the trailer, after the pages); *header_extent says which.
Result<PagesHeader> ReadPagesHeader(const ReadableFile& file, const FileEntry& entry,
                                    const std::string& path, size_t* header_extent) {
  if (file.size() != entry.size || entry.extents.empty() || entry.extents[0].offset != 0) {
    return Error(Code::kCorrupt, "'{}' is {} bytes with {} extents, its manifest says {}", path,
                 file.size(), entry.extents.size(), entry.size);
  }
  std::string first(std::min<uint64_t>(file.size(), 12), '\0');
  CAIRN_RETURN_IF_ERROR(file.ReadAt(0, first.data(), first.size()));
  CAIRN_ASSIGN_OR_RETURN(const uint32_t format, PagesFileFormat(first, path));
  uint64_t at = 0;  // where the header starts
  uint64_t tail = 0;  // bytes after it in its extent
  *header_extent = 0;
  if (format != kPagesFormatV1) {
    if (file.size() < kPagesTrailerBytes) return Error(Code::kCorrupt, "'{}' is truncated", path);
    std::string trailer(kPagesTrailerBytes, '\0');
    CAIRN_RETURN_IF_ERROR(file.ReadAt(file.size() - kPagesTrailerBytes, trailer.data(),
                                      trailer.size()));
    CAIRN_ASSIGN_OR_RETURN(at, DecodePagesTrailer(trailer, file.size(), path));
    tail = kPagesTrailerBytes;
    *header_extent = entry.extents.size() - 1;
  }
  const Extent& extent = entry.extents[*header_extent];
  if (extent.offset != at || extent.length < tail) {
    return Error(Code::kCorrupt, "'{}': its manifest's extents do not hold a header at {}", path,
                 at);
  }
  std::string prefix(std::min<uint64_t>(file.size() - at, kPagesFixedPrefix), '\0');
  CAIRN_RETURN_IF_ERROR(file.ReadAt(at, prefix.data(), prefix.size()));
  CAIRN_ASSIGN_OR_RETURN(uint64_t header_bytes, PagesHeaderSize(prefix, path));
  if (header_bytes != extent.length - tail || extent.length > file.size() - at) {
    return Error(Code::kCorrupt, "'{}': header of {} bytes, its manifest says {}", path,
                 header_bytes, extent.length - tail);
  }
  std::string head(extent.length, '\0');
  CAIRN_RETURN_IF_ERROR(file.ReadAt(at, head.data(), head.size()));
  CAIRN_RETURN_IF_ERROR(VerifyExtentRange(extent, at, head.data(), head.size(), path));
  CAIRN_ASSIGN_OR_RETURN(PagesHeader header, DecodePagesHeader(head, path));
  if (header.format != format || header.HeaderOffset() != at) {
    return Error(Code::kCorrupt, "'{}': a format {} header at {} in a format {} file", path,
                 header.format, at, format);
  }
  return header;
}

// Streams the extents other than the header's through a buffer of
// kVerifyPiece bytes, checking every block's CRC.
constexpr uint64_t kVerifyPiece = 16 * kBlockSize;

Status VerifyDataExtents(const ReadableFile& file, const FileEntry& entry, size_t header_extent,
                         const std::string& path) {
  std::vector<uint8_t> buffer;
  for (size_t i = 0; i < entry.extents.size(); ++i) {
    if (i == header_extent) continue;
    const Extent& e = entry.extents[i];
    if (e.offset + e.length > file.size()) {
      return Error(Code::kCorrupt, "'{}': extent past the end of the file", path);
    }
    buffer.resize(std::min(kVerifyPiece, e.length));
    for (uint64_t pos = e.offset; pos < e.offset + e.length; pos += kVerifyPiece) {
      const uint64_t take = std::min(kVerifyPiece, e.offset + e.length - pos);
      CAIRN_RETURN_IF_ERROR(file.ReadAt(pos, buffer.data(), take));
      CAIRN_RETURN_IF_ERROR(VerifyExtentRange(e, pos, buffer.data(), take, path));
    }
  }
  return Status::Ok();
}

}  // namespace

Result<std::unique_ptr<PagedCopy>> PagedCopy::Load(const Tier& tier, const std::string& name,
                                                   int64_t version, const FileEntry& entry) {
  CAIRN_ASSIGN_OR_RETURN(auto file, tier.Open(name, version, entry.name));
  return Load(std::move(file), name, version, entry);
}

Result<std::unique_ptr<PagedCopy>> PagedCopy::Load(std::unique_ptr<ReadableFile> file,
                                                   const std::string& name, int64_t version,
                                                   const FileEntry& entry) {
  const std::string path = file->path();
  auto copy = std::make_unique<PagedCopy>();
  copy->file_ = std::move(file);
  size_t header_extent = 0;
  CAIRN_ASSIGN_OR_RETURN(copy->header_,
                         ReadPagesHeader(*copy->file_, entry, path, &header_extent));
  const PagesHeader& h = copy->header_;
  if (h.name != name || h.version != version || h.FileSize() != entry.size) {
    return Error(Code::kCorrupt, "'{}' is not a whole copy of '{}' version {}", path, name, version);
  }
  CAIRN_RETURN_IF_ERROR(VerifyDataExtents(*copy->file_, entry, header_extent, path));
  copy->lengths_ = h.PageLengths();
  copy->data_offset_.assign(h.pages.size(), 0);
  uint64_t pos = h.DataOffset();
  for (size_t i = 0; i < h.pages.size(); ++i) {
    const PageRecord& p = h.pages[i];
    if (p.kind != PageKind::kData) continue;
    copy->data_offset_[i] = pos;
    if (p.shareable && copy->lengths_[i] == h.page_size) copy->shareable_.emplace(p.digest, i);
    pos += copy->lengths_[i];
  }
  return copy;
}

std::optional<size_t> PagedCopy::Find(const PageDigest& digest) const {
  auto it = shareable_.find(digest);
  if (it == shareable_.end()) return std::nullopt;
  return it->second;
}

Status PagedCopy::ReadPages(size_t first, size_t count, uint8_t* dst) const {
  uint64_t bytes = 0;
  for (size_t i = first; i < first + count; ++i) bytes += lengths_[i];
  CAIRN_RETURN_IF_ERROR(file_->ReadAt(data_offset_[first], dst, bytes));
  // Each page is checked against its digest, so that neither this rank's
  // regions nor a reference to the page are ever given other bytes.
  PageHasher hasher(header_.hash);
  for (size_t i = first; i < first + count; ++i) {
    if (hasher.Hash(dst, lengths_[i]) != header_.pages[i].digest) {
      return Error(Code::kCorrupt, "'{}': page {} does not match its digest", file_->path(), i);
    }
    dst += lengths_[i];
  }
  return Status::Ok();
}

namespace {

// The requests this rank sends, and the pages that wait for them.
struct Pending {
  std::vector<std::vector<Request>> to_rank;
  // (page index, rank) of pages filled by a remote response.
  std::vector<std::pair<size_t, int>> pages;
};

// Reads this copy's stored pages into their places in the image: a run of
// consecutive stored pages is consecutive in the file and in the image, so
// it takes one read.
Status FillStored(const PagedCopy& mine, const std::vector<uint64_t>& offsets,
                  std::vector<uint8_t>* image) {
  const std::vector<PageRecord>& pages = mine.header().pages;
  for (size_t i = 0; i < pages.size();) {
    if (pages[i].kind != PageKind::kData) {
      ++i;
      continue;
    }
    size_t end = i + 1;
    while (end < pages.size() && pages[end].kind == PageKind::kData) ++end;
    CAIRN_RETURN_IF_ERROR(mine.ReadPages(i, end - i, image->data() + offsets[i]));
    i = end;
  }
  return Status::Ok();
}

// Fills what this rank can from its own copies (FillStored first: a local
// duplicate is copied from its stored page in the image); returns the
// requests to every other rank (per rank, sorted and unique) and notes
// which pages wait for which request.
Status FillLocal(const PagedCopy& mine, int rank, int nranks, const PagedCopyLoader& load,
                 const std::vector<uint64_t>& offsets, std::vector<uint8_t>* image, Pending* pending) {
  CAIRN_RETURN_IF_ERROR(FillStored(mine, offsets, image));
  const PagesHeader& h = mine.header();
  pending->to_rank.assign(static_cast<size_t>(nranks), {});
  for (size_t i = 0; i < h.pages.size(); ++i) {
    const PageRecord& p = h.pages[i];
    if (p.kind == PageKind::kData) continue;
    uint8_t* dst = image->data() + offsets[i];
    if (mine.lengths()[i] != h.page_size) {
      return Error(Code::kCorrupt, "page {} is a reference but not a whole page", i);
    }
    if (p.rank != rank) {
      pending->to_rank[static_cast<size_t>(p.rank)].push_back({p.version, p.digest});
      pending->pages.emplace_back(i, p.rank);
      continue;
    }
    const PagedCopy* source = &mine;
    if (p.kind != PageKind::kLocalDup) {
      CAIRN_ASSIGN_OR_RETURN(source, load(p.version));
    }
    std::optional<size_t> page = source->Find(p.digest);
    if (!page) {
      return Error(Code::kCorrupt, "page {} refers to version {} of this rank, which does not "
                   "store it", i, p.version);
    }
    if (source == &mine) {
      std::memcpy(dst, image->data() + offsets[*page], h.page_size);  // checked by FillStored
    } else {
      CAIRN_RETURN_IF_ERROR(source->ReadPages(*page, 1, dst));
    }
  }
  for (auto& list : pending->to_rank) {
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
  }
  return Status::Ok();
}

// Places the responses of `from` (to this rank's sorted requests) into the
// pages waiting for them, each checked against its digest.
Status PlaceResponses(const PagedCopy& mine, int from, const std::vector<Request>& asked,
                      const std::vector<uint8_t>& responses, const Pending& pending,
                      const std::vector<uint64_t>& offsets, std::vector<uint8_t>* image) {
  const PagesHeader& h = mine.header();
  const size_t slot = 1 + size_t{h.page_size};
  PageHasher hasher(h.hash);
  for (auto [page, rank] : pending.pages) {
    if (rank != from) continue;
    const PageRecord& p = h.pages[page];
    Request want{p.version, p.digest};
    size_t i = static_cast<size_t>(std::lower_bound(asked.begin(), asked.end(), want) - asked.begin());
    const uint8_t* r = responses.data() + i * slot;
    if (r[0] != kFound) {
      return Error(Code::kCorrupt, "page {} refers to rank {}'s copy of version {}, which does "
                   "not hold it", page, from, p.version);
    }
    if (hasher.Hash(r + 1, h.page_size) != p.digest) {
      return Error(Code::kCorrupt, "page {} from rank {} (version {}) does not match its digest",
                   page, from, p.version);
    }
    std::memcpy(image->data() + offsets[page], r + 1, h.page_size);
  }
  return Status::Ok();
}

}  // namespace

Status ResolvePagedImage(Comm& comm, const PagedCopy* mine, const PagedCopyLoader& load,
                         std::vector<uint8_t>* image) {
  const int rank = comm.rank();
  const int nranks = comm.size();
  Status local = mine == nullptr ? Error(Code::kNotFound, "no usable copy on this rank")
                                 : Status::Ok();
  Pending pending;
  pending.to_rank.assign(static_cast<size_t>(nranks), {});
  std::vector<uint64_t> offsets;
  uint32_t page_size = 0;
  if (local.ok()) {
    offsets = ImageOffsets(mine->lengths());
    image->assign(mine->lengths().empty() ? 0 : offsets.back() + mine->lengths().back(), 0);
    page_size = mine->header().page_size;
    local = FillLocal(*mine, rank, nranks, load, offsets, image, &pending);
    if (!local.ok()) pending.to_rank.assign(static_cast<size_t>(nranks), {});
  }
  // Every rank's page size rides along with its request counts, so that a
  // server sizes its responses as its requester expects.
  std::vector<int64_t> counts(static_cast<size_t>(nranks) + 1, 0);
  for (int r = 0; r < nranks; ++r) counts[static_cast<size_t>(r)] = static_cast<int64_t>(pending.to_rank[static_cast<size_t>(r)].size());
  counts[static_cast<size_t>(nranks)] = page_size;
  CAIRN_ASSIGN_OR_RETURN(std::vector<int64_t> all, comm.AllgatherWords(counts));
  const size_t width = static_cast<size_t>(nranks) + 1;
  for (int shift = 1; shift < nranks; ++shift) {
    const int to = (rank + shift) % nranks;
    const int from = (rank - shift + nranks) % nranks;
    const size_t asked_of_me = static_cast<size_t>(all[static_cast<size_t>(from) * width + static_cast<size_t>(rank)]);
    const auto from_page_size = static_cast<uint32_t>(all[static_cast<size_t>(from) * width + static_cast<size_t>(nranks)]);
    const std::vector<Request>& mine_to = pending.to_rank[static_cast<size_t>(to)];
    std::vector<uint8_t> incoming(asked_of_me * kRequestBytes);
    CAIRN_RETURN_IF_ERROR(comm.SendRecv(to, AsBytes(EncodeRequests(mine_to)), from, incoming));
    std::string served = Serve(DecodeRequests(incoming), from_page_size, load);
    std::vector<uint8_t> responses(mine_to.size() * (1 + size_t{page_size}));
    CAIRN_RETURN_IF_ERROR(comm.SendRecv(from, AsBytes(served), to, responses));
    if (local.ok() && !mine_to.empty()) {
      local = PlaceResponses(*mine, to, mine_to, responses, pending, offsets, image);
    }
  }
  return local;
}

std::unique_ptr<StagedPart> StagedImage(std::vector<uint8_t> image) {
  return std::make_unique<ImageStagedPart>(std::move(image));
}

}  // namespace cairn
