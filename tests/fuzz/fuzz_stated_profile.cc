// Fuzzes the stated-figure profile builder (model/stated_profile.h):
// BuildStatedProfile on a node and devices whose figures come from the
// input, NaN, infinities and negatives included, as `cairn model` builds a
// profile from vendor figures. A refusal must be kInvalidArgument; an
// accepted profile must pass ValidateIoProfile, which the optimizer relies
// on, and be readable once written.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "model/stated_profile.h"

namespace cairn::fuzz {
namespace {

// The profile has max_parallelism points per frequency and device: the
// bound keeps one run small, not a limit of the builder (the slides' node
// has 48 cores).
constexpr int kMaxParallelism = 64;
constexpr size_t kMaxFrequencies = 8;
constexpr size_t kMaxDevices = 3;

// Each figure keeps its stated value unless the input replaces it, so that
// short inputs stay near the real figures (which build a valid profile)
// and longer ones reach every check: mostly plausible values, sometimes
// anything a double can be (NaN, infinities, negatives).
void MaybeReplace(FuzzedDataProvider* in, double* figure) {
  if (!in->ConsumeBool()) return;
  *figure = in->ConsumeBool() ? in->ConsumeFloatingPoint<double>()
                              : in->ConsumeFloatingPointInRange<double>(-1, 1e10);
}

StatedNode ConsumeNode(FuzzedDataProvider* in) {
  StatedNode node = SlidesNode();
  if (in->ConsumeBool()) {
    node.frequencies_khz.resize(in->ConsumeIntegralInRange<size_t>(0, kMaxFrequencies));
    for (auto& khz : node.frequencies_khz) khz = in->ConsumeIntegral<uint32_t>();
  }
  if (in->ConsumeBool()) node.cores = in->ConsumeIntegralInRange(-1, 1024);
  if (in->ConsumeBool()) node.max_parallelism = in->ConsumeIntegralInRange(-1, kMaxParallelism);
  MaybeReplace(in, &node.idle_w);
  MaybeReplace(in, &node.app_power_w);
  MaybeReplace(in, &node.min_volts);
  MaybeReplace(in, &node.max_volts);
  return node;
}

StatedDevice ConsumeDevice(FuzzedDataProvider* in) {
  StatedDevice d = in->ConsumeBool() ? StatedIoDrive() : StatedSsd();
  if (in->ConsumeBool()) d.name = in->ConsumeRandomLengthString(16);
  for (int op = 0; op < kIoOps; ++op) {
    MaybeReplace(in, &d.stated_bps[op]);
    MaybeReplace(in, &d.active_w[op]);
  }
  MaybeReplace(in, &d.single_stream_fraction);
  MaybeReplace(in, &d.cpu_fraction);
  MaybeReplace(in, &d.contention);
  MaybeReplace(in, &d.wait_busy_fraction);
  return d;
}

void FuzzOne(FuzzedDataProvider* in) {
  const StatedNode node = ConsumeNode(in);
  // One device when the input runs out; none (refused) is a choice too.
  std::vector<StatedDevice> devices((1 + in->ConsumeIntegralInRange<size_t>(0, kMaxDevices)) %
                                    (kMaxDevices + 1));
  for (auto& d : devices) d = ConsumeDevice(in);
  Result<IoProfile> profile = BuildStatedProfile(node, devices);
  if (!profile.ok()) {
    CAIRN_FUZZ_CHECK(profile.status().code() == Code::kInvalidArgument, "refused with {}",
                     profile.status().ToString());
    return;
  }
  Status valid = ValidateIoProfile(*profile);
  CAIRN_FUZZ_CHECK(valid.ok(), "built an invalid profile: {}", valid.message());
  Result<IoProfile> read = ParseIoProfile(SerializeIoProfile(*profile), "stated.json");
  CAIRN_FUZZ_CHECK(read.ok(), "a stated profile, written, is refused: {}", read.status().message());
}

}  // namespace
}  // namespace cairn::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  cairn::fuzz::FuzzOne(&in);
  return 0;
}
