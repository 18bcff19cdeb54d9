// cairn verify: reads every stored copy and checks every block. Exit status
// 0 only if every committed copy is clean, 1 if any damage was found, 2 if
// the storage could not be examined. A memory-tier part that fails its CRCs
// is scanned against its ECC sidecar (software chipkill): it is reported as
// CORRECTABLE when a restart would repair it, with the shards the sidecar
// corrects, else as DAMAGED with the shards it corrects and those it cannot.
// Correctable damage still exits 1: the copy is one more fault away from
// being lost, and the operator should know. Copies without a manifest
// (a checkpoint interrupted or still being written) are counted, not
// judged.
#include <cstdio>
#include <memory>

#include "cli/inventory.h"
#include "cli/output.h"
#include "cli/store_commands.h"
#include "runtime/ecc_sidecar.h"
#include "runtime/part_io.h"

namespace cairn {
namespace {

struct Totals {
  int files = 0;
  int damaged = 0;  // files with damage no copy-local means repairs
  int correctable = 0;
  int incomplete = 0;
  uint64_t bytes = 0;
  uint64_t shards_corrected = 0;
  uint64_t shards_uncorrectable = 0;
};

class Verifier {
 public:
  explicit Verifier(bool json) : json_(json) {}

  void Copy(const CopyInfo& c) {
    if (c.state.rfind("incomplete", 0) == 0) {
      ++totals_.incomplete;
      return;
    }
    Tier tier(PosixEnv(), TierKind::kMemory, DirName(DirName(c.dir)), TierConfig{});
    const Manifest* manifest = &c.manifest;
    Manifest repairable;
    if (c.state != "complete") {
      // A part of the wrong size (truncated) fails the inventory's check of
      // the copy but may still be rebuilt from its sidecar, as a restart
      // would: then judge its files one by one.
      auto m = CheckCopyForRepair(tier, c.name, c.version, c.rank, -1);
      if (!m.ok()) {
        ++totals_.damaged;
        Damaged(c, c.dir, c.state, nullptr);
        return;
      }
      repairable = std::move(m).value();
      manifest = &repairable;
    }
    const FileEntry* parity = FindParityEntry(*manifest);
    for (const auto& f : manifest->files) File(c, tier, f, parity);
  }

  const Totals& totals() const { return totals_; }

 private:
  void File(const CopyInfo& c, const Tier& tier, const FileEntry& f, const FileEntry* parity) {
    ++totals_.files;
    const std::string path = JoinPath(c.dir, f.name);
    Status s = VerifyFile(tier, c.name, c.version, f);
    if (s.ok()) {
      totals_.bytes += f.size;
      return;
    }
    if (f.kind != FileKind::kPart || parity == nullptr || s.code() != Code::kCorrupt) {
      ++totals_.damaged;
      Damaged(c, path, s.ToString(), nullptr);
      return;
    }
    auto scan = ScanPart(tier, c.name, c.version, f, *parity);
    if (!scan.ok()) {
      ++totals_.damaged;
      Damaged(c, path, s.ToString() + "; ECC sidecar unusable: " + scan.status().ToString(),
              nullptr);
      return;
    }
    totals_.shards_corrected += scan->shards_corrected;
    totals_.shards_uncorrectable += scan->shards_uncorrectable;
    if (!scan->status.ok()) {
      ++totals_.damaged;
      Damaged(c, path, s.ToString() + "; not repairable: " + scan->status.ToString(), &*scan);
      return;
    }
    ++totals_.correctable;
    totals_.bytes += f.size;
    if (json_) {
      std::puts(Describe(c, path, s.ToString(), &*scan).Bool("correctable", true)
                    .ToString().c_str());
    } else {
      std::printf("CORRECTABLE %s: %llu shard(s) in %llu stripe(s) corrected by its ECC sidecar, "
                  "0 uncorrectable (%s)\n",
                  path.c_str(), static_cast<unsigned long long>(scan->shards_corrected),
                  static_cast<unsigned long long>(scan->stripes_repaired), s.ToString().c_str());
    }
  }

  // scan: what the ECC sidecar made of it, or null if it had no say.
  void Damaged(const CopyInfo& c, const std::string& file, const std::string& problem,
               const EccScan* scan) {
    if (json_) {
      JsonObject o = Describe(c, file, problem, scan);
      if (scan != nullptr) o.Bool("correctable", false);
      std::puts(o.ToString().c_str());
    } else if (scan != nullptr) {
      std::printf("DAMAGED %s: %llu shard(s) corrected, %llu shard(s) in %llu stripe(s) "
                  "uncorrectable by its ECC sidecar (%s)\n",
                  file.c_str(), static_cast<unsigned long long>(scan->shards_corrected),
                  static_cast<unsigned long long>(scan->shards_uncorrectable),
                  static_cast<unsigned long long>(scan->stripes_uncorrectable), problem.c_str());
    } else {
      std::printf("DAMAGED %s: %s\n", file.c_str(), problem.c_str());
    }
  }

  static JsonObject Describe(const CopyInfo& c, const std::string& file,
                             const std::string& problem, const EccScan* scan) {
    JsonObject o;
    o.Str("tier", c.tier).Str("node", c.node).Str("name", c.name).Int("version", c.version)
        .Int("rank", c.rank).Str("file", file).Str("problem", problem);
    if (scan != nullptr) {
      o.Int("ecc_shards_corrected", static_cast<int64_t>(scan->shards_corrected))
          .Int("ecc_shards_uncorrectable", static_cast<int64_t>(scan->shards_uncorrectable))
          .Int("ecc_stripes_uncorrectable", static_cast<int64_t>(scan->stripes_uncorrectable));
    }
    return o;
  }

  bool json_;
  Totals totals_;
};

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
  Verifier verifier(json);
  for (const auto& c : *copies) verifier.Copy(c);
  const Totals& t = verifier.totals();
  if (json) {
    std::puts(JsonObject().Int("files_checked", t.files).Int("bytes_ok", static_cast<int64_t>(t.bytes))
                  .Int("damaged", t.damaged).Int("correctable", t.correctable)
                  .Int("incomplete_copies", t.incomplete)
                  .Int("ecc_shards_corrected", static_cast<int64_t>(t.shards_corrected))
                  .Int("ecc_shards_uncorrectable", static_cast<int64_t>(t.shards_uncorrectable))
                  .ToString().c_str());
  } else {
    std::printf("%d files checked (%s verified), %d damaged, %d correctable, %d incomplete "
                "copies",
                t.files, HumanBytes(t.bytes).c_str(), t.damaged, t.correctable, t.incomplete);
    if (t.shards_corrected + t.shards_uncorrectable > 0) {
      std::printf("; ECC shards: %llu corrected, %llu uncorrectable",
                  static_cast<unsigned long long>(t.shards_corrected),
                  static_cast<unsigned long long>(t.shards_uncorrectable));
    }
    std::printf("\n");
  }
  return t.damaged + t.correctable == 0 ? 0 : 1;
}

}  // namespace

void AddVerifyCommand(CLI::App& app, int& exit_code) {
  CLI::App* cmd = app.add_subcommand(
      "verify",
      "Read every stored copy and check every block. Exit status: 0 every copy is clean, "
      "1 damage was found (even if its ECC sidecar can correct it), 2 error");
  auto config = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  cmd->add_option("--config", *config, "Cairn configuration file");
  cmd->add_flag("--json", *json, "One JSON object per damaged file, then a summary");
  cmd->callback([&exit_code, config, json] { exit_code = RunVerify(*config, *json); });
}

}  // namespace cairn
