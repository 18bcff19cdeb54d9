#include "dedup/page_hash.h"

#include <openssl/sha.h>
#include <xxh_x86dispatch.h>

#include "base/vector_state.h"

namespace cairn {

PageDigest PageHasher::Hash(const void* data, size_t n) const {
  PageDigest d;
  switch (kind_) {
    case PageHashKind::kXxh3_128: {
      XXH128_hash_t h = XXH3_128bits_dispatch(data, n);
      ClearUpperVectorHalves();
      XXH128_canonical_t c;
      XXH128_canonicalFromHash(&c, h);
      std::memcpy(d.bytes.data(), c.digest, sizeof c.digest);
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
