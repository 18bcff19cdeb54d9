// The pages file: one rank's protected regions for one version when
// deduplication is on ([dedup] mode, docs/dedup.md). It replaces the part
// file of that copy: the bytes of the pages stored here (kData), in page
// order, and a header (identity, region table, one record per page).
// Every other page is a reference, resolved on restart: to a page of this
// copy (kLocalDup), of another rank's copy of the same version (kRemote),
// or of an older version (kPrevious). Format 2 puts the header after the
// pages (a preamble names the format, a trailer locates the header), so
// that a page is written while it is hashed, before the plan of the pages
// after it is known; format 1 put it first and is still read.
// docs/format.md "Paged part file" documents every byte.
// Thread-safety: values and pure functions.
#ifndef CAIRN_FORMAT_PAGE_TABLE_H_
#define CAIRN_FORMAT_PAGE_TABLE_H_

#include <array>
#include <bit>
#include <compare>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "base/status.h"

namespace cairn {

inline constexpr char kPagesMagic[8] = {'C', 'A', 'I', 'R', 'N', 'P', 'G', 'S'};
// The format written; kPagesFormatV1 (header first) is still read.
inline constexpr uint32_t kPagesFormatVersion = 2;
inline constexpr uint32_t kPagesFormatV1 = 1;
// Format 2 ends with a trailer: the header's offset (u64), then this magic.
inline constexpr char kPagesTrailerMagic[8] = {'C', 'A', 'I', 'R', 'N', 'P', 'G', 'T'};
inline constexpr uint64_t kPagesTrailerBytes = 16;
// The widest digest (SHA-256); narrower ones are zero-padded in memory.
inline constexpr size_t kMaxDigestBytes = 32;
// Data pages start at this boundary (mmap- and O_DIRECT-friendly).
inline constexpr uint64_t kPagesDataAlign = 4096;
// Pages are at least this large and at most this large (config keeps
// [dedup] page_size inside; a reader refuses anything else).
inline constexpr uint32_t kMinPageSize = 512;
inline constexpr uint32_t kMaxPageSize = 1u << 24;

// How page digests are computed; the stored value names it in the file.
enum class PageHashKind : uint8_t {
  kXxh3_128 = 1,
  kSha1 = 2,
  kSha256 = 3,
  // Test-only: 8 bits of xxh3, so that different pages collide on purpose
  // (the collision tests; never for data one cares about).
  kTestCollide = 255,
};
// Bytes of a digest of that kind (16, 20, 32, 1); 0 for an unknown kind.
size_t DigestBytes(PageHashKind kind);
// "xxh3-128", "sha1", "sha256", "test-collide".
const char* PageHashKindName(PageHashKind kind);

// A page digest, zero-padded to kMaxDigestBytes; compared as bytes.
struct PageDigest {
  std::array<uint8_t, kMaxDigestBytes> bytes{};
  // The arrays' own lexicographic order (memcmp's). Digests are uniform,
  // so the first eight bytes almost always decide: loaded big-endian, they
  // compare in that order at once. Sorting and merging the top-K sets
  // compare digests millions of times.
  std::strong_ordering operator<=>(const PageDigest& other) const {
    const uint64_t mine = LeadingWord(), theirs = other.LeadingWord();
    if (mine != theirs) return mine <=> theirs;
    return std::memcmp(bytes.data() + 8, other.bytes.data() + 8, kMaxDigestBytes - 8) <=> 0;
  }
  bool operator==(const PageDigest& other) const {
    return std::memcmp(bytes.data(), other.bytes.data(), kMaxDigestBytes) == 0;
  }
  std::string Hex(size_t digest_bytes) const;

 private:
  uint64_t LeadingWord() const {
    uint64_t word;
    std::memcpy(&word, bytes.data(), 8);
    if constexpr (std::endian::native == std::endian::little) word = __builtin_bswap64(word);
    return word;
  }
};

// What a page's record says about where its bytes are.
enum class PageKind : uint8_t {
  kData = 0,      // stored in this file
  kLocalDup = 1,  // the same bytes as a kData page of this file with the same digest
  kRemote = 2,    // stored by rank `rank` in its copy of this version
  kPrevious = 3,  // stored by rank `rank` in its copy of version `version` (older)
};
const char* PageKindName(PageKind kind);

struct PageRecord {
  PageKind kind = PageKind::kData;
  // kData only: false when verify found a different page with the same
  // digest earlier in this copy; such a page is never a reference target.
  bool shareable = true;
  PageDigest digest;
  // Where the bytes are (kRemote, kPrevious); this copy's own rank and
  // version for kData and kLocalDup.
  int32_t rank = 0;
  int64_t version = 0;
};

// Pages a region of `bytes` makes: whole pages of page_size from its first
// byte, and a shorter last page for the rest. The one rule the page table,
// the planner's page view and the engine's size check all count by.
// REQUIRES: page_size > 0.
inline uint64_t PagesIn(uint64_t bytes, uint64_t page_size) {
  return (bytes + page_size - 1) / page_size;
}

struct PagedRegion {
  int32_t id = 0;
  uint64_t elem_size = 0;
  uint64_t count = 0;
  uint64_t bytes() const { return elem_size * count; }
};

struct PagesHeader {
  uint32_t format = kPagesFormatVersion;
  PageHashKind hash = PageHashKind::kXxh3_128;
  uint32_t page_size = 4096;
  std::string name;
  int64_t version = 0;
  int32_t rank = 0;
  int32_t nranks = 0;
  std::vector<PagedRegion> regions;  // sorted by id
  std::vector<PageRecord> pages;     // regions' pages in order, region by region

  // Pages of a region: whole pages of page_size from its first byte, and a
  // shorter last page for the rest (a region is never padded).
  uint64_t PagesOf(const PagedRegion& region) const;
  // The length of page k of `region`.
  uint64_t PageLength(const PagedRegion& region, uint64_t k) const;
  // The length of every page, in page order (what `pages` must match).
  std::vector<uint32_t> PageLengths() const;
  // Encoded header length, and where the data pages start (aligned):
  // after the preamble in format 2, after the header in format 1.
  uint64_t HeaderBytes() const;
  // Where the records start in the encoded header.
  uint64_t RecordsOffset() const;
  uint64_t DataOffset() const;
  // Sum of the lengths of the kData pages.
  uint64_t DataBytes() const;
  // Where the header starts: after the data pages in format 2, at 0 in
  // format 1.
  uint64_t HeaderOffset() const;
  uint64_t FileSize() const;
  // The longest FileSize() the regions can make in the current format,
  // whatever `pages` holds: every page stored and every record as long as
  // a reference (kRemote).
  uint64_t LongestFileSize() const;
  // Exactly HeaderBytes() long; carries a CRC32C of itself.
  std::string Encode() const;
  // The same into dst, which has HeaderBytes() bytes (a mapped file's next
  // bytes: no intermediate copy of a megabyte-long page table).
  void EncodeTo(void* dst) const;
};

// Format 2's first kPagesDataAlign bytes: the magic, the format version,
// zeros.
std::string EncodePagesPreamble();
// Format 2's last kPagesTrailerBytes bytes, for a header at header_offset.
std::string EncodePagesTrailer(uint64_t header_offset);
// The format version a pages file's first 12 bytes name: 1 or 2;
// kUnsupported for another version, kCorrupt without the magic.
Result<uint32_t> PagesFileFormat(const std::string& first12, const std::string& origin);
// The header offset a format-2 trailer (a file's last kPagesTrailerBytes)
// names, checked to lie between the preamble and the trailer of a file of
// file_size bytes; kCorrupt naming origin otherwise.
Result<uint64_t> DecodePagesTrailer(const std::string& last16, uint64_t file_size,
                                    const std::string& origin);

// Bytes needed to decode the header, read from its first 32 bytes.
inline constexpr size_t kPagesFixedPrefix = 32;
Result<uint64_t> PagesHeaderSize(const std::string& first32, const std::string& origin);
// Parses and checks the header at the start of `prefix` (which holds at
// least the whole header): magic, version (1 or 2), CRC, a page record for every
// page the regions have, references only to ranks < nranks and to versions
// not newer than this one. kCorrupt naming origin and what is wrong.
Result<PagesHeader> DecodePagesHeader(const std::string& prefix, const std::string& origin);

}  // namespace cairn

#endif  // CAIRN_FORMAT_PAGE_TABLE_H_
