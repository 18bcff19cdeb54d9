// Fuzzes the ECC sidecar's header reader (format/ecc_sidecar_layout.h):
// DecodeEccHeader on the start of a sidecar file. An accepted header must
// encode back to exactly its bytes, and its stripes must cover the part it
// names: the repair reads part_size bytes in `stripes` stripes.
#include <cstdint>
#include <string>

#include "format/ecc_sidecar_layout.h"
#include "fuzz_support.h"

namespace cairn::fuzz {
namespace {

constexpr uint64_t kHeaderCrcAt = kEccHeaderSize - 4;  // over the bytes before it

void FuzzOne(std::string bytes) {
  if (bytes.size() >= kEccHeaderSize) RestoreCrc32c(&bytes, kHeaderCrcAt, kHeaderCrcAt);
  const std::string origin = "fuzz.part.ecc";
  Result<EccGeometry> g = DecodeEccHeader(bytes, origin);
  if (!g.ok()) {
    CheckRefusal(g.status(), Code::kCorrupt, origin);
    return;
  }
  CAIRN_FUZZ_CHECK(EncodeEccHeader(*g) == bytes.substr(0, kEccHeaderSize),
                   "header does not re-encode to its bytes");
  const uint64_t stripe_bytes = static_cast<uint64_t>(g->k) * kEccShardSize;
  CAIRN_FUZZ_CHECK(g->stripes == g->part_size / stripe_bytes + (g->part_size % stripe_bytes != 0),
                   "{} stripes of {} bytes do not cover a part of {} bytes", g->stripes,
                   stripe_bytes, g->part_size);
}

}  // namespace
}  // namespace cairn::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  cairn::fuzz::FuzzOne(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
