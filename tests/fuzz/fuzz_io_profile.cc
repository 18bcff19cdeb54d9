// Fuzzes the I/O profile reader (model/io_profile.h): ParseIoProfile on a
// JSON document, as `cairn model --profile` and io.parallelism = auto read
// one. A refusal must name the file; an accepted profile must pass
// ValidateIoProfile (the optimizer relies on it), give a point for every
// index IoProfilePoint allows, and survive writing and reading again.
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz_support.h"
#include "model/io_profile.h"

namespace cairn::fuzz {
namespace {

// Beyond this many grid points the walk over all of them is skipped, so
// that a large input does not make the run slow.
constexpr size_t kMaxPointsWalked = 4096;

void WalkPoints(const IoProfile& profile) {
  size_t walked = 0;
  for (const DeviceIoProfile& device : profile.devices) {
    for (size_t b = 0; b < device.blocks.size(); ++b) {
      for (size_t f = 0; f < profile.frequencies_khz.size(); ++f) {
        for (size_t p = 0; p < device.parallelism.size(); ++p) {
          if (++walked > kMaxPointsWalked) return;
          for (IoOp op : {IoOp::kRead, IoOp::kWrite}) {
            IoPoint point = IoProfilePoint(profile, device, op, f, p, b);
            CAIRN_FUZZ_CHECK(point.throughput_bps > 0 && point.watts > 0,
                             "point {}/{}/{}/{} of '{}': {} B/s, {} W", IoOpName(op), f, p, b,
                             device.name, point.throughput_bps, point.watts);
          }
        }
      }
    }
  }
}

void FuzzOne(std::string_view json) {
  const std::string file = "fuzz-profile.json";
  Result<IoProfile> profile = ParseIoProfile(json, file);
  if (!profile.ok()) {
    const Code code = profile.status().code();
    CAIRN_FUZZ_CHECK(code == Code::kCorrupt || code == Code::kUnsupported ||
                         code == Code::kInvalidArgument,
                     "refused with {}: {}", CodeName(code), profile.status().message());
    CheckRefusal(profile.status(), code, file);
    return;
  }
  Status valid = ValidateIoProfile(*profile);
  CAIRN_FUZZ_CHECK(valid.ok(), "accepted an invalid profile: {}", valid.message());
  WalkPoints(*profile);
  const std::string written = SerializeIoProfile(*profile);
  Result<IoProfile> again = ParseIoProfile(written, file);
  CAIRN_FUZZ_CHECK(again.ok(), "a profile written by Cairn is refused: {}",
                   again.status().message());
  CAIRN_FUZZ_CHECK(SerializeIoProfile(*again) == written,
                   "profile changes when written and read again");
}

}  // namespace
}  // namespace cairn::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  cairn::fuzz::FuzzOne(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
