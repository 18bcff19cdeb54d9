// Inventory: every copy of every version on every tier and node that the
// configuration points at, as the `cairn` commands show it.
// Thread-safety: not thread-safe.
#ifndef CAIRN_CLI_INVENTORY_H_
#define CAIRN_CLI_INVENTORY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "base/config.h"
#include "env/env.h"
#include "format/manifest.h"
#include "storage/tier.h"

namespace cairn {

enum class CopyState {
  kComplete,    // the manifest decodes and lists files that are all there
  kIncomplete,  // files of the rank but no manifest: interrupted, or being written
  kDamaged,     // a manifest that does not decode, or files missing or of the wrong size
};

// One rank's copy of one version on one tier of one node.
struct CopyInfo {
  TierKind tier = TierKind::kMemory;
  std::string node;
  std::string name;
  int64_t version = 0;
  int rank = 0;
  int nranks = 0;      // valid when state == kComplete
  uint64_t run_id = 0; // valid when state == kComplete (0: a format-1 manifest)
  CopyState state = CopyState::kIncomplete;
  std::string problem;  // why the copy is damaged
  Manifest manifest;    // valid when state == kComplete
  std::string root;     // the tier's directory of this node
  std::string dir;      // the version directory
};

// The copies of one version on one tier that one run (Manifest::run_id, on
// a job of nranks ranks) wrote. A version directory can hold the copies of
// several runs — a job of another size, or a later run that reused the
// version number, overwrote only its own ranks' files — and only the ranks
// of one run make a version whole.
struct RunCopies {
  TierKind tier = TierKind::kMemory;
  std::string name;
  int64_t version = 0;
  uint64_t run_id = 0;  // 0: unknown (format-1 manifests, or no manifest read)
  int nranks = 0;       // 0: unknown (no manifest of the run read)
  std::vector<const CopyInfo*> copies;  // in inventory order; point into the inventory

  int CompleteRanks() const;
  bool complete() const { return nranks > 0 && CompleteRanks() == nranks; }
};

// Groups the inventory by tier, name, version, run and job size, in that
// order. A copy without a readable manifest (incomplete or damaged) belongs
// to no known run: it joins the version's run on that tier when there is
// exactly one and its rank fits that job, else a group of unknown run.
// The result points into `copies`, which must outlive it.
std::vector<RunCopies> GroupByRun(const std::vector<CopyInfo>& copies);

// The cross-node redundancy of a run's copies (docs/redundancy.md), from
// their manifests: which scheme, and how many ranks' manifests list their
// parity. The parity is complete when every rank of the run has a
// complete copy whose manifest lists it.
struct RunRedundancy {
  std::string scheme = "none";  // "partner", "xor", "rs", or "none"
  int protected_ranks = 0;
  bool complete = false;
  // "xor", "xor 3/4" (parity not complete: an encode pending or cut short,
  // or copies lost), "none".
  std::string Text(const RunCopies& run) const;
};
RunRedundancy RedundancyOf(const RunCopies& run);

// "0123456789abcdef" (the run id in hex), or "-" for an unknown run.
std::string RunIdText(uint64_t run_id);

// The tier that holds copy, to read its files.
Tier TierOf(Env* env, const CopyInfo& copy);

// Every rank's copy found on every enabled tier and node, in tier order
// (memory, ssd, pfs), then by node, name, version and rank.
Result<std::vector<CopyInfo>> TakeInventory(Env* env, const Config& config);

// Where TakeInventory looks, for messages that find nothing: each enabled
// tier's directory of node directories (or its shared directory), such as
// "ssd tier /scratch/run/ssd/{node}".
std::string DescribeSearchedTiers(Env* env, const Config& config);

// Loads the configuration the way the library does (file, then environment).
Result<Config> LoadCliConfig(const std::string& path);

}  // namespace cairn

#endif  // CAIRN_CLI_INVENTORY_H_
