// cairn inspect NAME VERSION: every copy of one version, rank by rank: where
// it is, its files and regions, and whether every block passes its CRC.
#include <cstdio>
#include <memory>

#include "cli/inventory.h"
#include "cli/output.h"
#include "cli/store_commands.h"
#include "format/manifest.h"
#include "runtime/catalog.h"
#include "runtime/part_io.h"

namespace cairn {
namespace {

const char* FileKindName(FileKind kind) {
  switch (kind) {
    case FileKind::kPart: return "part";
    case FileKind::kRouted: return "routed";
    case FileKind::kParity: return "parity";
  }
  return "?";
}

int RunInspect(const std::string& config_path, const std::string& name, int64_t version,
               bool json) {
  auto config = LoadCliConfig(config_path);
  if (!config.ok()) {
    std::fprintf(stderr, "cairn inspect: %s\n", config.status().ToString().c_str());
    return 2;
  }
  auto copies = TakeInventory(PosixEnv(), *config);
  if (!copies.ok()) {
    std::fprintf(stderr, "cairn inspect: %s\n", copies.status().ToString().c_str());
    return 2;
  }
  Table table({"TIER", "NODE", "RANK", "FILE", "BYTES", "REGIONS", "CRC"});
  int found = 0;
  for (const auto& c : *copies) {
    if (c.name != name || c.version != version) continue;
    ++found;
    if (c.state != "complete") {
      if (json) {
        std::puts(JsonObject().Str("tier", c.tier).Str("node", c.node).Int("rank", c.rank)
                      .Str("state", c.state).ToString().c_str());
      } else {
        table.Add({c.tier, c.node, std::to_string(c.rank), "-", "-", "-", c.state});
      }
      continue;
    }
    Tier tier(PosixEnv(), TierKind::kMemory, DirName(DirName(c.dir)), TierConfig{});
    for (const auto& f : c.manifest.files) {
      Status crc = VerifyFile(tier, name, version, f);
      std::string regions = "-";
      std::string regions_json = "[]";
      if (f.kind == FileKind::kPart) {
        auto header = ReadPartHeader(tier, name, version, f);
        if (header.ok()) {
          regions.clear();
          regions_json = "[";
          for (const auto& r : header->regions) {
            regions += fmt::format("{}{}:{}x{}", regions.empty() ? "" : " ", r.id, r.count, r.elem_size);
            regions_json += fmt::format("{}{{\"id\": {}, \"count\": {}, \"elem_size\": {}}}",
                                        regions_json.size() > 1 ? ", " : "", r.id, r.count, r.elem_size);
          }
          regions_json += "]";
        }
      } else if (f.kind == FileKind::kRouted) {
        regions = "file " + f.logical;
      } else {
        regions = "ECC parity";
      }
      std::string status = crc.ok() ? "ok" : crc.ToString();
      if (json) {
        std::puts(JsonObject()
                      .Str("tier", c.tier).Str("node", c.node).Int("rank", c.rank)
                      .Int("nranks", c.nranks).Str("file", f.name)
                      .Str("kind", FileKindName(f.kind))
                      .Int("bytes", static_cast<int64_t>(f.size)).Raw("regions", regions_json)
                      .Bool("crc_ok", crc.ok()).Str("crc", status)
                      .ToString().c_str());
      } else {
        table.Add({c.tier, c.node, std::to_string(c.rank), f.name, HumanBytes(f.size), regions,
                   status});
      }
    }
  }
  if (found == 0) {
    std::fprintf(stderr, "cairn inspect: no copy of '%s' version %lld on any tier\n", name.c_str(),
                 static_cast<long long>(version));
    return 1;
  }
  if (!json) table.Print();
  return 0;
}

}  // namespace

void AddInspectCommand(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand("inspect", "Show every copy of one version, rank by rank");
  auto config = std::make_shared<std::string>();
  auto name = std::make_shared<std::string>();
  auto version = std::make_shared<int64_t>(0);
  auto json = std::make_shared<bool>(false);
  cmd->add_option("name", *name, "Checkpoint name")->required();
  cmd->add_option("version", *version, "Version")->required();
  cmd->add_option("--config", *config, "Cairn configuration file");
  cmd->add_flag("--json", *json, "One JSON object per file");
  cmd->callback([&exit_code, config, name, version, json] {
    exit_code = RunInspect(*config, *name, *version, *json);
  });
}

}  // namespace cairn
