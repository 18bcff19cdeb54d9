// Page digests for deduplication: xxh3-128 through xxHash's dispatching
// entry point (the fastest on this hardware, DESIGN.md), SHA-1 (the
// paper's) and SHA-256 through OpenSSL's libcrypto, and a test-only 8-bit
// digest that makes different pages collide. docs/dedup.md gives the
// collision analysis of each.
// Thread-safety: a PageHasher is immutable; Hash may run on any thread.
#ifndef CAIRN_DEDUP_PAGE_HASH_H_
#define CAIRN_DEDUP_PAGE_HASH_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "base/status.h"
#include "codec/copy_crc32c.h"
#include "format/page_table.h"

namespace cairn {

class PageHasher {
 public:
  explicit PageHasher(PageHashKind kind) : kind_(kind), digest_bytes_(DigestBytes(kind)) {}

  PageHashKind kind() const { return kind_; }
  size_t digest_bytes() const { return digest_bytes_; }
  // The digest of n bytes at data, zero-padded to kMaxDigestBytes.
  PageDigest Hash(const void* data, size_t n) const;

  // Whether CopyAndHash can run: the digest is computed in the pass of a
  // copy (xxh3-128, codec/copy_crc32c_xxh3.h).
  bool HashesInCopy() const { return kind_ == PageHashKind::kXxh3_128; }
  // Copies n bytes from src to dst, puts the digest of each `page` bytes
  // of them in digests[0 .. n / page) and returns Crc32c(src, n, crc), in
  // one pass over the bytes where the CPU allows. REQUIRES:
  // HashesInCopy(); n a multiple of page.
  uint32_t CopyAndHash(void* dst, const void* src, size_t n, size_t page, uint32_t crc,
                       CopyStores stores, PageDigest* digests) const;

 private:
  PageHashKind kind_;
  size_t digest_bytes_;
};

// "xxh3-128", "sha1", "sha256" or "test-collide"; kConfig naming the value
// otherwise.
Result<PageHashKind> ParsePageHashKind(const std::string& name);

// For unordered containers keyed by digest: every digest kind is uniform
// in its first bytes, so eight of them make a good bucket hash.
struct PageDigestHash {
  size_t operator()(const PageDigest& d) const {
    size_t h;
    std::memcpy(&h, d.bytes.data(), sizeof h);
    return h;
  }
};

}  // namespace cairn

#endif  // CAIRN_DEDUP_PAGE_HASH_H_
