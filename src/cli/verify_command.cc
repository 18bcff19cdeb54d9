// cairn verify: reads every stored copy and checks every block; exits 1 and
// names each damaged file if anything fails. A memory-tier part that fails
// its CRCs but is repairable from its ECC sidecar (software chipkill) is
// reported as CORRECTABLE with the number of shards a restart corrects, and
// does not count as damaged: a restart uses that copy.
#include <cstdio>
#include <memory>

#include "cli/inventory.h"
#include "cli/output.h"
#include "cli/store_commands.h"
#include "runtime/ecc_sidecar.h"
#include "runtime/part_io.h"

namespace cairn {
namespace {

int RunVerify(const std::string& config_path, bool json) {
  auto config = LoadCliConfig(config_path);
  if (!config.ok()) {
    std::fprintf(stderr, "cairn verify: %s\n", config.status().ToString().c_str());
    return 2;
  }
  auto copies = TakeInventory(PosixEnv(), *config);
  if (!copies.ok()) {
    std::fprintf(stderr, "cairn verify: %s\n", copies.status().ToString().c_str());
    return 2;
  }
  int files = 0, damaged = 0, incomplete = 0, correctable = 0;
  uint64_t bytes = 0, shards_corrected = 0;
  auto report = [&](const CopyInfo& c, const std::string& file, const std::string& problem) {
    if (json) {
      std::puts(JsonObject().Str("tier", c.tier).Str("node", c.node).Str("name", c.name)
                    .Int("version", c.version).Int("rank", c.rank).Str("file", file)
                    .Str("problem", problem).ToString().c_str());
    } else {
      std::printf("DAMAGED %s: %s\n", file.c_str(), problem.c_str());
    }
  };
  for (const auto& c : *copies) {
    if (c.state.rfind("incomplete", 0) == 0) {
      ++incomplete;
      continue;
    }
    if (c.state != "complete") {
      ++damaged;
      report(c, c.dir, c.state);
      continue;
    }
    Tier tier(PosixEnv(), TierKind::kMemory, DirName(DirName(c.dir)), TierConfig{});
    const FileEntry* parity = FindParityEntry(c.manifest);
    for (const auto& f : c.manifest.files) {
      ++files;
      Status s = VerifyFile(tier, c.name, c.version, f);
      if (s.ok()) {
        bytes += f.size;
      } else if (f.kind == FileKind::kPart && parity != nullptr && s.code() == Code::kCorrupt) {
        auto repaired = RepairPart(tier, c.name, c.version, f, *parity);
        std::string file = JoinPath(c.dir, f.name);
        if (repaired.ok()) {
          ++correctable;
          shards_corrected += repaired->shards_corrected;
          bytes += f.size;
          if (json) {
            std::puts(JsonObject().Str("tier", c.tier).Str("node", c.node).Str("name", c.name)
                          .Int("version", c.version).Int("rank", c.rank).Str("file", file)
                          .Str("problem", s.ToString()).Bool("correctable", true)
                          .Int("ecc_shards_corrected",
                               static_cast<int64_t>(repaired->shards_corrected))
                          .ToString().c_str());
          } else {
            std::printf("CORRECTABLE %s: %llu shard(s) in %llu stripe(s) corrected from its ECC "
                        "sidecar (%s)\n",
                        file.c_str(), static_cast<unsigned long long>(repaired->shards_corrected),
                        static_cast<unsigned long long>(repaired->stripes_repaired),
                        s.ToString().c_str());
          }
        } else {
          ++damaged;
          report(c, file, s.ToString() + "; not repairable: " + repaired.status().ToString());
        }
      } else {
        ++damaged;
        report(c, JoinPath(c.dir, f.name), s.ToString());
      }
    }
  }
  if (json) {
    std::puts(JsonObject().Int("files_checked", files).Int("bytes_ok", static_cast<int64_t>(bytes))
                  .Int("damaged", damaged).Int("incomplete_copies", incomplete)
                  .Int("correctable", correctable)
                  .Int("ecc_shards_corrected", static_cast<int64_t>(shards_corrected))
                  .ToString().c_str());
  } else {
    std::printf("%d files checked (%s verified), %d damaged, %d incomplete copies", files,
                HumanBytes(bytes).c_str(), damaged, incomplete);
    if (correctable > 0) {
      std::printf(", %d correctable (%llu ECC shards corrected)", correctable,
                  static_cast<unsigned long long>(shards_corrected));
    }
    std::printf("\n");
  }
  return damaged == 0 ? 0 : 1;
}

}  // namespace

void AddVerifyCommand(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand("verify", "Read every stored copy and check every block");
  auto config = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  cmd->add_option("--config", *config, "Cairn configuration file");
  cmd->add_flag("--json", *json, "One JSON object per damaged file, then a summary");
  cmd->callback([&exit_code, config, json] { exit_code = RunVerify(*config, *json); });
}

}  // namespace cairn
