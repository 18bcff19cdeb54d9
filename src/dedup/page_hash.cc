#include "dedup/page_hash.h"

#include <openssl/sha.h>
#include <xxh_x86dispatch.h>

#include <algorithm>

#include "base/vector_state.h"
#include "codec/copy_crc32c_xxh3.h"

namespace cairn {

namespace {

// xxHash's canonical form (big-endian, high half first) as the digest.
PageDigest DigestOf(XXH128_hash_t h) {
  PageDigest d;
  XXH128_canonical_t c;
  XXH128_canonicalFromHash(&c, h);
  std::memcpy(d.bytes.data(), c.digest, sizeof c.digest);
  return d;
}

}  // namespace

PageDigest PageHasher::Hash(const void* data, size_t n) const {
  PageDigest d;
  switch (kind_) {
    case PageHashKind::kXxh3_128: {
      XXH128_hash_t h = XXH3_128bits_dispatch(data, n);
      ClearUpperVectorHalves();
      d = DigestOf(h);
      break;
    }
    case PageHashKind::kSha1:
      SHA1(static_cast<const unsigned char*>(data), n, d.bytes.data());
      break;
    case PageHashKind::kSha256:
      SHA256(static_cast<const unsigned char*>(data), n, d.bytes.data());
      break;
    case PageHashKind::kTestCollide:
      // Eight bits: pages collide after a handful, on purpose.
      d.bytes[0] = static_cast<uint8_t>(XXH3_64bits_dispatch(data, n));
      ClearUpperVectorHalves();
      break;
  }
  return d;
}

uint32_t PageHasher::CopyAndHash(void* dst, const void* src, size_t n, size_t page, uint32_t crc,
                                 CopyStores stores, PageDigest* digests) const {
  constexpr size_t kBatch = 64;  // hashes per call, on the stack
  Xxh3Hash128 hashes[kBatch];
  auto* d = static_cast<uint8_t*>(dst);
  const auto* s = static_cast<const uint8_t*>(src);
  for (size_t at = 0; at < n;) {
    const size_t pages = std::min(kBatch, (n - at) / page);
    crc = CopyWithCrc32cXxh3(d + at, s + at, pages * page, page, crc, stores, hashes);
    for (size_t k = 0; k < pages; ++k) *digests++ = DigestOf({hashes[k].low64, hashes[k].high64});
    at += pages * page;
  }
  return crc;
}

Result<PageHashKind> ParsePageHashKind(const std::string& name) {
  for (PageHashKind kind : {PageHashKind::kXxh3_128, PageHashKind::kSha1, PageHashKind::kSha256,
                            PageHashKind::kTestCollide}) {
    if (name == PageHashKindName(kind)) return kind;
  }
  return Error(Code::kConfig,
               "key 'dedup.hash': '{}' is not a page hash (xxh3-128, sha1, sha256, test-collide)",
               name);
}

}  // namespace cairn
