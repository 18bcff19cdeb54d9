#include "runtime/config_agreement.h"

#include <string>
#include <vector>

#include "codec/crc32c.h"

namespace cairn {

Status AgreeOnConfig(Comm& comm, const Config& config) {
  if (comm.size() == 1) return Status::Ok();
  std::vector<const ConfigKey*> keys;
  std::vector<std::string> values;
  std::vector<int64_t> lowest;
  for (const ConfigKey& key : ConfigKeys()) {
    if (key.per_rank) continue;
    keys.push_back(&key);
    values.push_back(key.show(config));
    const std::string& text = values.back();
    lowest.push_back(static_cast<int64_t>(uint64_t{Crc32c(text.data(), text.size())} << 32 |
                                          (text.size() & 0xFFFFFFFF)));
  }
  std::vector<int64_t> highest = lowest;
  CAIRN_RETURN_IF_ERROR(comm.AllreduceMin(lowest));
  CAIRN_RETURN_IF_ERROR(comm.AllreduceMax(highest));
  std::string differ;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (lowest[i] == highest[i]) continue;
    differ += fmt::format("{}{} ('{}' on rank {})", differ.empty() ? "" : ", ",
                          keys[i]->FullName(), values[i], comm.rank());
  }
  if (differ.empty()) return Status::Ok();
  return Error(Code::kConfig,
               "configuration differs between ranks: {}; every rank must use the same value "
               "(only paths, device and log keys may differ, docs/config.md)",
               differ);
}

}  // namespace cairn
