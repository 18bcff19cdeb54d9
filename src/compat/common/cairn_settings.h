// cairn_settings.h — what a peer's configuration becomes in Cairn: a set of
// Cairn configuration keys (docs/config.md) written to a private TOML file for
// cairn_init, and the warnings for the peer's keys that have no Cairn
// meaning. Cairn's own configuration still applies on top: $CAIRN_CONFIG is
// not read (the translated file takes its place), but every CAIRN_<KEY>
// environment variable overrides the translated value.
// Not thread-safe; one instance per init call.
#ifndef CAIRN_COMPAT_COMMON_CAIRN_SETTINGS_H_
#define CAIRN_COMPAT_COMMON_CAIRN_SETTINGS_H_

#include <mpi.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "compat/common/outcome.h"

namespace cairn_compat {

class CairnSettings {
 public:
  using Value = std::variant<std::string, int64_t, bool>;

  // `peer` names the compatibility layer in messages ("VeloC", "SCR", "FTI").
  explicit CairnSettings(std::string peer) : peer_(std::move(peer)) {}

  // Sets Cairn key `key` ("tiers.ssd.path") to `value`; a later Set wins.
  void Set(const std::string& key, Value value) { keys_[key] = std::move(value); }
  const std::map<std::string, Value>& keys() const { return keys_; }
  const std::vector<std::string>& warnings() const { return warnings_; }

  // Points the node-local tier at `base`: the memory tier when `base` is
  // on tmpfs (/dev/shm), else the ssd tier; one directory per node below it.
  void SetNodeLocalPath(const std::string& base);
  // "memory" or "ssd": the tier SetNodeLocalPath chose ("ssd" if none).
  const std::string& node_local_tier() const { return node_local_tier_; }
  // Where the layer keeps files of its own (layout journals, SCR's index):
  // "<general.dir>/cairn-compat" (the peer's persistent directory), else
  // "<node-local base>/cairn-compat".
  std::string StateDir() const;

  // Asks for cross-node redundancy: scheme "partner", "xor" or "rs" over
  // groups of `group_size` ranks on distinct nodes (0: Cairn's default),
  // `parity` parities per group for rs (< 0: half the group). Resolved at Init against the job's
  // node count (topology.ranks_per_node, or the real nodes): a job with
  // too few nodes gets none, and a group larger than the nodes is cut to
  // them, each with a warning naming `where`. A request the peer makes by
  // default (`by_default`: no key of the user asked for it) is dropped
  // without a warning on a job of one node, where the peers run without it
  // too and nothing can be protected across nodes.
  void RequestRedundancy(const std::string& scheme, int group_size, int parity,
                         const std::string& where, bool by_default);
  // After Init: the scheme in effect ("" for none).
  const std::string& redundancy() const { return redundancy_; }
  // Init's step that turns the request into keys for a job of `nodes`
  // nodes (CountNodes); public for the unit test.
  void ResolveRedundancy(int nodes);

  // Records a warning about a peer setting: `where` is "file:line" or the
  // environment variable. Printed once, by rank 0, at Init.
  void Warn(const std::string& where, const std::string& what);

  // Writes the keys to a private temporary TOML file, calls cairn_init(comm)
  // (or cairn_init_single when comm is MPI_COMM_NULL), removes the file,
  // and prints the warnings on rank 0. Collective over comm.
  Status Init(MPI_Comm comm);

 private:
  Result<std::string> WriteToml() const;
  void PrintWarnings(MPI_Comm comm) const;
  int64_t RanksPerNode() const;

  struct RedundancyRequest {
    std::string scheme;
    int group_size = 0;
    int parity = 0;
    std::string where;
    bool by_default = false;
  };

  std::string peer_;
  std::map<std::string, Value> keys_;
  std::vector<std::string> warnings_;
  std::string node_local_tier_ = "ssd";
  std::string node_local_base_;  // absolute, as given to SetNodeLocalPath
  std::optional<RedundancyRequest> redundancy_request_;
  std::string redundancy_;
};

// A Cairn routed-file name (letters, digits, '.', '_', '-'; at most 128
// characters; no leading '.') standing for the peer's file `path`, the same
// for the same path in every run: other characters become "_XX" (hex), '_'
// itself "_5F"; a name that would be too long keeps its tail and gains a
// 64-bit hash of the whole path.
std::string RoutedFileName(const std::string& path);

// `path` made absolute against the working directory (no symlinks resolved),
// so that "out/a.dat" and "./out/a.dat" name the same file.
std::string AbsolutePath(const std::string& path);

// The number of nodes of the job on comm: ceil(size / ranks_per_node) when
// ranks_per_node > 0 (Cairn's virtual nodes), else the hosts (shared-memory
// domains). Collective.
int CountNodes(MPI_Comm comm, int64_t ranks_per_node);

// Prints "<peer>: error: <message>" to stderr (peers report to their log).
void ReportError(const std::string& peer, const std::string& message);

}  // namespace cairn_compat

#endif  // CAIRN_COMPAT_COMMON_CAIRN_SETTINGS_H_
