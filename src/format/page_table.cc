#include "format/page_table.h"

#include <cstring>

#include "codec/crc32c.h"
#include "format/bytes.h"
#include "format/layout.h"

namespace cairn {
namespace {

// magic, format, header CRC, header bytes, hash, digest bytes, reserved, page size
constexpr uint64_t kFixedBytes = 8 + 4 + 4 + 8 + 1 + 1 + 2 + 4;
constexpr uint64_t kIdentityBytes = 8 + 4 + 4 + 2;  // version, rank, nranks, name length
constexpr uint64_t kRegionBytes = 4 + 8 + 8;         // id, elem_size, count
constexpr uint64_t kCrcOffset = 12;
constexpr uint8_t kShareableFlag = 1;

bool IsReference(PageKind kind) { return kind == PageKind::kRemote || kind == PageKind::kPrevious; }

uint64_t RecordBytes(const PageRecord& r, size_t digest_bytes) {
  return 2 + digest_bytes + (IsReference(r.kind) ? 4 + 8 : 0);
}

// The CRC of the header with its CRC field read as zero, without a copy
// of it (a page table runs to megabytes).
uint32_t HeaderCrc(std::string_view bytes) {
  static constexpr char kZeroCrc[4] = {};
  uint32_t crc = Crc32c(bytes.data(), kCrcOffset);
  crc = Crc32c(kZeroCrc, sizeof kZeroCrc, crc);
  return Crc32c(bytes.data() + kCrcOffset + 4, bytes.size() - kCrcOffset - 4, crc);
}

Status Corrupt(const std::string& origin, const std::string& what) {
  return Error(Code::kCorrupt, "pages file '{}': {}", origin, what);
}

// The regions, then the page records, of an encoded header.
Status DecodeRegions(ByteReader& r, PagesHeader* h, const std::string& origin) {
  uint32_t n = r.U32();
  if (!r.ok() || n > r.remaining() / kRegionBytes) return Corrupt(origin, "region table truncated");
  h->regions.resize(n);
  for (auto& region : h->regions) {
    region.id = static_cast<int32_t>(r.U32());
    region.elem_size = r.U64();
    region.count = r.U64();
    if (region.elem_size != 0 && region.count > UINT64_MAX / region.elem_size) {
      return Corrupt(origin, "region " + std::to_string(region.id) + " overflows 64 bits");
    }
  }
  return Status::Ok();
}

Status DecodeRecords(ByteReader& r, PagesHeader* h, const std::string& origin) {
  size_t digest_bytes = DigestBytes(h->hash);
  uint64_t expected = 0;
  for (const auto& region : h->regions) expected += h->PagesOf(region);
  uint64_t n = r.U64();
  if (!r.ok() || n != expected) {
    return Corrupt(origin, "holds " + std::to_string(n) + " page records, its regions have " +
                               std::to_string(expected) + " pages");
  }
  if (n > r.remaining() / (2 + digest_bytes)) return Corrupt(origin, "page records truncated");
  h->pages.resize(n);
  for (uint64_t i = 0; i < n; ++i) {
    PageRecord& p = h->pages[i];
    uint8_t kind = r.U8();
    if (kind > static_cast<uint8_t>(PageKind::kPrevious)) {
      return Corrupt(origin, "page " + std::to_string(i) + " has unknown kind " + std::to_string(kind));
    }
    p.kind = static_cast<PageKind>(kind);
    const uint8_t flags = r.U8();
    if ((flags & ~kShareableFlag) != 0) {
      return Corrupt(origin, "page " + std::to_string(i) + " has unknown flags " + std::to_string(flags));
    }
    p.shareable = (flags & kShareableFlag) != 0;
    r.CopyTo(p.digest.bytes.data(), digest_bytes);
    p.rank = h->rank;
    p.version = h->version;
    if (IsReference(p.kind)) {
      p.rank = static_cast<int32_t>(r.U32());
      p.version = r.I64();
    }
    if (!r.ok()) return Corrupt(origin, "page records truncated");
    bool bad_target = p.rank < 0 || p.rank >= h->nranks || p.version > h->version ||
                      (p.kind == PageKind::kPrevious && p.version == h->version) ||
                      (p.kind == PageKind::kRemote && p.version != h->version);
    if (bad_target) {
      return Corrupt(origin, "page " + std::to_string(i) + " refers to rank " +
                                 std::to_string(p.rank) + " version " + std::to_string(p.version));
    }
  }
  return Status::Ok();
}

}  // namespace

size_t DigestBytes(PageHashKind kind) {
  switch (kind) {
    case PageHashKind::kXxh3_128: return 16;
    case PageHashKind::kSha1: return 20;
    case PageHashKind::kSha256: return 32;
    case PageHashKind::kTestCollide: return 1;
  }
  return 0;
}

const char* PageHashKindName(PageHashKind kind) {
  switch (kind) {
    case PageHashKind::kXxh3_128: return "xxh3-128";
    case PageHashKind::kSha1: return "sha1";
    case PageHashKind::kSha256: return "sha256";
    case PageHashKind::kTestCollide: return "test-collide";
  }
  return "unknown";
}

const char* PageKindName(PageKind kind) {
  switch (kind) {
    case PageKind::kData: return "data";
    case PageKind::kLocalDup: return "local-dup";
    case PageKind::kRemote: return "remote";
    case PageKind::kPrevious: return "previous";
  }
  return "unknown";
}

std::string PageDigest::Hex(size_t digest_bytes) const {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < digest_bytes && i < bytes.size(); ++i) {
    out.push_back(kHex[bytes[i] >> 4]);
    out.push_back(kHex[bytes[i] & 15]);
  }
  return out;
}

uint64_t PagesHeader::PagesOf(const PagedRegion& region) const {
  return PagesIn(region.bytes(), page_size);
}

uint64_t PagesHeader::PageLength(const PagedRegion& region, uint64_t k) const {
  const uint64_t rest = region.bytes() - k * page_size;
  return rest < page_size ? rest : page_size;
}

std::vector<uint32_t> PagesHeader::PageLengths() const {
  std::vector<uint32_t> lengths;
  for (const auto& region : regions) {
    uint64_t n = PagesOf(region);
    for (uint64_t i = 0; i < n; ++i) lengths.push_back(static_cast<uint32_t>(PageLength(region, i)));
  }
  return lengths;
}

uint64_t PagesHeader::HeaderBytes() const {
  size_t digest_bytes = DigestBytes(hash);
  uint64_t n = RecordsOffset();
  for (const auto& p : pages) n += RecordBytes(p, digest_bytes);
  return n;
}

uint64_t PagesHeader::RecordsOffset() const {
  return kFixedBytes + kIdentityBytes + name.size() + 4 + regions.size() * kRegionBytes + 8;
}

uint64_t PagesHeader::LongestFileSize() const {
  PageRecord reference;
  reference.kind = PageKind::kRemote;  // the longest record
  uint64_t pages_total = 0, data = 0;
  for (const auto& region : regions) {
    pages_total += PagesOf(region);
    data += region.bytes();
  }
  const uint64_t header = RecordsOffset() + pages_total * RecordBytes(reference, DigestBytes(hash));
  return kPagesDataAlign + data + header + kPagesTrailerBytes;
}

uint64_t PagesHeader::DataOffset() const {
  return format == kPagesFormatV1 ? AlignUp(HeaderBytes(), kPagesDataAlign) : kPagesDataAlign;
}

uint64_t PagesHeader::HeaderOffset() const {
  return format == kPagesFormatV1 ? 0 : DataOffset() + DataBytes();
}

uint64_t PagesHeader::FileSize() const {
  if (format == kPagesFormatV1) return DataOffset() + DataBytes();
  return HeaderOffset() + HeaderBytes() + kPagesTrailerBytes;
}

uint64_t PagesHeader::DataBytes() const {
  // Page by page without PageLengths' vector: it runs for every file
  // written and read, over every page.
  uint64_t n = 0;
  size_t i = 0;
  for (const auto& region : regions) {
    const uint64_t count = PagesOf(region);
    for (uint64_t k = 0; k < count && i < pages.size(); ++k, ++i) {
      if (pages[i].kind == PageKind::kData) n += PageLength(region, k);
    }
  }
  return n;
}

std::string PagesHeader::Encode() const {
  std::string out(HeaderBytes(), '\0');
  EncodeTo(out.data());
  return out;
}

void PagesHeader::EncodeTo(void* dst) const {
  size_t digest_bytes = DigestBytes(hash);
  const uint64_t header_bytes = HeaderBytes();
  ByteWriter w;
  w.Bytes(std::string_view(kPagesMagic, 8));
  w.U32(format);
  w.U32(0);  // CRC, filled in below
  w.U64(header_bytes);
  w.U8(static_cast<uint8_t>(hash));
  w.U8(static_cast<uint8_t>(digest_bytes));
  w.U16(0);
  w.U32(page_size);
  w.I64(version);
  w.U32(static_cast<uint32_t>(rank));
  w.U32(static_cast<uint32_t>(nranks));
  w.String16(name);
  w.U32(static_cast<uint32_t>(regions.size()));
  for (const auto& r : regions) {
    w.U32(static_cast<uint32_t>(r.id));
    w.U64(r.elem_size);
    w.U64(r.count);
  }
  w.U64(pages.size());
  char* const out = static_cast<char*>(dst);
  std::memcpy(out, w.data().data(), w.data().size());
  // The records in place: one per page, a megabyte for a few GiB of them.
  char* at = out + w.data().size();
  for (const auto& p : pages) {
    at[0] = static_cast<char>(p.kind);
    at[1] = static_cast<char>(p.shareable ? kShareableFlag : 0);
    std::memcpy(at + 2, p.digest.bytes.data(), digest_bytes);
    at += 2 + digest_bytes;
    if (IsReference(p.kind)) {
      StoreLittleEndian(at, static_cast<uint32_t>(p.rank));
      StoreLittleEndian(at + 4, static_cast<uint64_t>(p.version));
      at += 12;
    }
  }
  StoreLittleEndian(out + kCrcOffset, HeaderCrc(std::string_view(out, header_bytes)));
}

std::string EncodePagesPreamble() {
  ByteWriter w;
  w.Bytes(std::string_view(kPagesMagic, 8));
  w.U32(kPagesFormatVersion);
  std::string out = std::move(w.data());
  out.resize(kPagesDataAlign, '\0');
  return out;
}

std::string EncodePagesTrailer(uint64_t header_offset) {
  ByteWriter w;
  w.U64(header_offset);
  w.Bytes(std::string_view(kPagesTrailerMagic, 8));
  return std::move(w.data());
}

Result<uint32_t> PagesFileFormat(const std::string& first12, const std::string& origin) {
  if (first12.size() < 12 || std::memcmp(first12.data(), kPagesMagic, 8) != 0) {
    return Corrupt(origin, "no pages-file magic");
  }
  ByteReader r(first12);
  r.Bytes(8);
  const uint32_t format = r.U32();
  if (format != kPagesFormatV1 && format != kPagesFormatVersion) {
    return Error(Code::kUnsupported, "pages file '{}': format version {} (this Cairn reads 1 and {})",
                 origin, format, kPagesFormatVersion);
  }
  return format;
}

Result<uint64_t> DecodePagesTrailer(const std::string& last16, uint64_t file_size,
                                    const std::string& origin) {
  if (last16.size() != kPagesTrailerBytes ||
      std::memcmp(last16.data() + 8, kPagesTrailerMagic, 8) != 0) {
    return Corrupt(origin, "no pages-file trailer");
  }
  ByteReader r(last16);
  const uint64_t offset = r.U64();
  if (offset < kPagesDataAlign || file_size < kPagesTrailerBytes + kFixedBytes ||
      offset > file_size - kPagesTrailerBytes - kFixedBytes) {
    return Corrupt(origin, "header offset " + std::to_string(offset) + " outside a file of " +
                               std::to_string(file_size) + " bytes");
  }
  return offset;
}

Result<uint64_t> PagesHeaderSize(const std::string& first32, const std::string& origin) {
  if (first32.size() < kPagesFixedPrefix || std::memcmp(first32.data(), kPagesMagic, 8) != 0) {
    return Corrupt(origin, "no pages-file magic");
  }
  ByteReader r(first32);
  r.Bytes(16);
  uint64_t n = r.U64();
  if (n < kFixedBytes || n > (1ULL << 34)) {
    return Corrupt(origin, "header length " + std::to_string(n) + " is implausible");
  }
  return n;
}

Result<PagesHeader> DecodePagesHeader(const std::string& prefix, const std::string& origin) {
  CAIRN_ASSIGN_OR_RETURN(uint64_t header_bytes, PagesHeaderSize(prefix.substr(0, 32), origin));
  if (prefix.size() < header_bytes) return Corrupt(origin, "header truncated");
  const std::string_view header = std::string_view(prefix).substr(0, header_bytes);
  ByteReader r(header);
  PagesHeader h;
  r.Bytes(8);
  h.format = r.U32();
  uint32_t crc = r.U32();
  if (h.format != kPagesFormatV1 && h.format != kPagesFormatVersion) {
    return Error(Code::kUnsupported, "pages file '{}': format version {} (this Cairn reads 1 and {})",
                 origin, h.format, kPagesFormatVersion);
  }
  if (crc != HeaderCrc(header)) return Corrupt(origin, "header CRC mismatch");
  r.U64();
  h.hash = static_cast<PageHashKind>(r.U8());
  uint8_t digest_bytes = r.U8();
  if (DigestBytes(h.hash) == 0 || DigestBytes(h.hash) != digest_bytes) {
    return Corrupt(origin, "unknown page hash " + std::to_string(static_cast<int>(h.hash)));
  }
  if (r.U16() != 0) return Corrupt(origin, "reserved header bytes are not zero");
  h.page_size = r.U32();
  if (h.page_size < kMinPageSize || h.page_size > kMaxPageSize) {
    return Corrupt(origin, "page size " + std::to_string(h.page_size) + " out of range");
  }
  h.version = r.I64();
  h.rank = static_cast<int32_t>(r.U32());
  h.nranks = static_cast<int32_t>(r.U32());
  h.name = r.String16();
  if (!r.ok() || h.nranks < 1 || h.rank < 0 || h.rank >= h.nranks) {
    return Corrupt(origin, "identity truncated or rank out of range");
  }
  CAIRN_RETURN_IF_ERROR(DecodeRegions(r, &h, origin));
  CAIRN_RETURN_IF_ERROR(DecodeRecords(r, &h, origin));
  if (r.remaining() != 0) return Corrupt(origin, "trailing bytes after the page records");
  return h;
}

}  // namespace cairn
