// cairn verify: reads every stored copy and checks every block. Exit status
// 0 only if every committed copy is clean, 1 if any damage was found, 2 if
// the storage could not be examined, 3 if no committed copy was found at
// all (an empty or wrong directory must not pass as "all clean"). A memory-tier part that fails its CRCs
// is scanned against its ECC sidecar (software chipkill): it is reported as
// CORRECTABLE when a restart would repair it, with the shards the sidecar
// corrects, else as DAMAGED with the shards it corrects and those it cannot.
// Correctable damage still exits 1: the copy is one more fault away from
// being lost, and the operator should know. Copies without a manifest
// (a checkpoint interrupted or still being written) are counted, not
// judged. Then each version is checked to be restorable (verify_restorable.h):
// a checkpoint name of which none is also exits 1.
#include <cstdio>
#include <set>

#include <fmt/format.h>

#include "cli/inventory.h"
#include "cli/output.h"
#include "cli/store_commands.h"
#include "cli/verify_redundancy.h"
#include "cli/verify_restorable.h"
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
    if (c.state == CopyState::kIncomplete) {
      ++totals_.incomplete;
      return;
    }
    const Tier tier = TierOf(PosixEnv(), c);
    const Manifest* manifest = &c.manifest;
    Manifest repairable;
    if (c.state == CopyState::kDamaged) {
      // A part of the wrong size (truncated) fails the inventory's check of
      // the copy but may still be rebuilt from its sidecar, as a restart
      // would: then judge its files one by one.
      auto m = CheckCopyForRepair(tier, c.name, c.version, c.rank, -1);
      if (!m.ok()) {
        Damaged(c, c.dir, c.problem, nullptr);
        return;
      }
      repairable = std::move(m).value();
      manifest = &repairable;
    }
    const FileEntry* parity = FindParityEntry(*manifest);
    for (const auto& f : manifest->files) File(c, tier, f, parity);
  }

  const Totals& totals() const { return totals_; }
  // The complete copies with a file damaged beyond what its sidecar corrects.
  const std::set<const CopyInfo*>& unusable() const { return unusable_; }

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
      Damaged(c, path, s.ToString(), nullptr);
      return;
    }
    auto scan = ScanPart(tier, c.name, c.version, f, *parity);
    if (!scan.ok()) {
      Damaged(c, path, s.ToString() + "; ECC sidecar unusable: " + scan.status().ToString(),
              nullptr);
      return;
    }
    totals_.shards_corrected += scan->shards_corrected;
    totals_.shards_uncorrectable += scan->shards_uncorrectable;
    if (!scan->status.ok()) {
      Damaged(c, path, s.ToString() + "; not repairable: " + scan->status.ToString(), &*scan);
      return;
    }
    ++totals_.correctable;
    totals_.bytes += f.size;
    if (json_) {
      JsonObject o = Describe(c, path, s.ToString(), &*scan);
      o["correctable"] = true;
      PrintJsonLine(o);
    } else {
      fmt::print("CORRECTABLE {}: {} shard(s) in {} stripe(s) corrected by its ECC sidecar, "
                 "0 uncorrectable ({})\n",
                 path, scan->shards_corrected, scan->stripes_repaired, s.ToString());
    }
  }

  // Counts `c` damaged beyond repair and reports it; scan: what the ECC
  // sidecar made of it, or null if it had no say.
  void Damaged(const CopyInfo& c, const std::string& file, const std::string& problem,
               const EccScan* scan) {
    ++totals_.damaged;
    unusable_.insert(&c);
    if (json_) {
      JsonObject o = Describe(c, file, problem, scan);
      if (scan != nullptr) o["correctable"] = false;
      PrintJsonLine(o);
    } else if (scan != nullptr) {
      fmt::print("DAMAGED {}: {} shard(s) corrected, {} shard(s) in {} stripe(s) "
                 "uncorrectable by its ECC sidecar ({})\n",
                 file, scan->shards_corrected, scan->shards_uncorrectable,
                 scan->stripes_uncorrectable, problem);
    } else {
      fmt::print("DAMAGED {}: {}\n", file, problem);
    }
  }

  static JsonObject Describe(const CopyInfo& c, const std::string& file,
                             const std::string& problem, const EccScan* scan) {
    JsonObject o = {{"tier", TierKindName(c.tier)}, {"node", c.node}, {"name", c.name},
                    {"version", c.version}, {"rank", c.rank}, {"file", file},
                    {"problem", problem}};
    if (scan != nullptr) {
      o["ecc_shards_corrected"] = scan->shards_corrected;
      o["ecc_shards_uncorrectable"] = scan->shards_uncorrectable;
      o["ecc_stripes_uncorrectable"] = scan->stripes_uncorrectable;
    }
    return o;
  }

  bool json_;
  Totals totals_;
  std::set<const CopyInfo*> unusable_;
};

void PrintSummary(const Totals& t, const RestorableTotals& r, bool json) {
  if (json) {
    PrintJsonLine({{"files_checked", t.files}, {"bytes_ok", t.bytes}, {"damaged", t.damaged},
                   {"correctable", t.correctable}, {"incomplete_copies", t.incomplete},
                   {"ecc_shards_corrected", t.shards_corrected},
                   {"ecc_shards_uncorrectable", t.shards_uncorrectable},
                   {"versions_not_restorable", r.versions_not_restorable},
                   {"names_without_restorable_version", r.names_without_version}});
    return;
  }
  std::string line =
      fmt::format("{} files checked ({} verified), {} damaged, {} correctable, {} incomplete "
                  "copies, {} version(s) not restorable",
                  t.files, HumanBytes(t.bytes), t.damaged, t.correctable, t.incomplete,
                  r.versions_not_restorable);
  if (t.shards_corrected + t.shards_uncorrectable > 0) {
    line += fmt::format("; ECC shards: {} corrected, {} uncorrectable", t.shards_corrected,
                        t.shards_uncorrectable);
  }
  std::puts(line.c_str());
}

}  // namespace

int RunVerify(const std::string& config_path, bool json) {
  auto config = LoadCliConfig(config_path);
  if (!config.ok()) return ReportError("verify", config.status());
  auto copies = TakeInventory(PosixEnv(), *config);
  if (!copies.ok()) return ReportError("verify", copies.status());
  Verifier verifier(json);
  for (const auto& c : *copies) verifier.Copy(c);
  const Totals& t = verifier.totals();
  const RedundancyTotals red = VerifyRedundancy(*copies, json);
  const RestorableTotals restorable =
      CheckRestorable(*copies, verifier.unusable(), red.rebuildable_ranks, json);
  PrintSummary(t, restorable, json);
  if (red.groups_checked > 0 && !json) {
    fmt::print("redundancy: {} group(s) re-encoded and compared, {} parity wrong, {} lost "
               "part(s) rebuildable, {} not\n",
               red.groups_checked, red.parity_wrong, red.rebuildable, red.unrebuildable);
  }
  if (t.files == 0 && t.damaged == 0) {
    // Nothing committed anywhere: a wrong --config or $CAIRN_DIR, or a job
    // that never checkpointed. "0 files checked, all clean" would hide it.
    return ReportError("verify",
                       fmt::format("no checkpoint found ({} incomplete copies) in {}",
                                   t.incomplete, DescribeSearchedTiers(PosixEnv(), *config)),
                       kExitNothingFound);
  }
  // A part its group can rebuild is still one more fault away from lost,
  // as correctable damage is: both exit 1. So does a name of which no
  // version can be restored. A version that is not restorable while a
  // newer or older one is can be a checkpoint the job never committed (it
  // died writing it), so it is reported without failing the check.
  const int findings = red.parity_wrong + red.rebuildable + red.unrebuildable +
                       static_cast<int>(restorable.names_without_version.size());
  return t.damaged + t.correctable + findings == 0 ? kExitOk : kExitDamage;
}

}  // namespace cairn
