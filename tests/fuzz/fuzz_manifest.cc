// Fuzzes the manifest reader (format/manifest.h): DecodeManifest on a whole
// manifest file, as runtime/catalog.cc reads one. What a decoded manifest
// says must survive writing and reading again unchanged (older format
// versions are read but written as the current one, so the bytes may
// differ), and every extent it lists must lie inside its file with one CRC
// per block, since part_io.cc indexes the CRC list by block without
// checking again.
#include <cstdint>
#include <string>

#include "format/layout.h"
#include "format/manifest.h"
#include "fuzz_support.h"

namespace cairn::fuzz {
namespace {

void CheckExtents(const Manifest& m) {
  for (const FileEntry& f : m.files) {
    for (const Extent& e : f.extents) {
      CAIRN_FUZZ_CHECK(e.offset <= f.size && e.length <= f.size - e.offset,
                       "extent {}+{} outside '{}' of {} bytes", e.offset, e.length, f.name, f.size);
      CAIRN_FUZZ_CHECK(e.crcs.size() == BlockCount(e.length), "extent of {} bytes has {} CRCs",
                       e.length, e.crcs.size());
    }
  }
}

void FuzzOne(std::string bytes) {
  // The checksum is the last 4 bytes, over everything before it.
  if (bytes.size() >= 4) RestoreCrc32c(&bytes, bytes.size() - 4, bytes.size() - 4);
  const std::string origin = "fuzz.manifest";
  Result<Manifest> m = DecodeManifest(bytes, origin);
  if (!m.ok()) {
    CheckRefusal(m.status(), Code::kCorrupt, origin);
    return;
  }
  CheckExtents(*m);
  const std::string encoded = m->Encode();
  Result<Manifest> again = DecodeManifest(encoded, origin);
  CAIRN_FUZZ_CHECK(again.ok(), "a decoded manifest, encoded again, is refused: {}",
                   again.status().message());
  CAIRN_FUZZ_CHECK(again->Encode() == encoded, "manifest changes when written and read again");
}

}  // namespace
}  // namespace cairn::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  cairn::fuzz::FuzzOne(std::string(reinterpret_cast<const char*>(data), size));
  return 0;
}
