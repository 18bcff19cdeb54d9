// Placement history: one record per checkpoint call of a run, kept per
// (virtual) node in <ssd tier root>/.status/history.jsonl, so that
// `cairn status` can show, after the fact and across runs, where the
// Checkpoint Location Controller put each checkpoint, why, and how it saw
// the SSD's wear and the application's slowdown at that moment.
//
// On each node the node's first rank appends the record of every
// checkpoint call (policy/clc.h decides; the engine fills the record). The
// file is informational: it is appended without fsync, so a crash may lose
// or tear its last line, and nothing in Cairn's restart path reads it.
//
// Format (docs/clc.md "Status"): JSON Lines, one object per record with the
// members of PlacementRecord under the same names, '\n' after each. Doubles
// that JSON cannot express are the strings "inf", "-inf" and "nan" (an idle
// SSD has an infinite estimated lifetime). Readers ignore members they do
// not know, so a later Cairn may add members without breaking an older
// `cairn status`; every member named below is required, except those marked
// "optional": added later, they take the value noted when absent, so that
// an older history still reads.
//
// Torn lines. An append is one write(2) of the whole line, so a torn line
// comes only from a crash or a full device in the middle of it. The reader
// skips a last line without its '\n'. So that a torn line can never swallow
// the next run's first record, AppendPlacementRecord starts with a '\n'
// when the file does not end in one; the reader therefore also skips
// complete lines that do not end in '}' (a torn fragment, terminated by the
// next append). A line that ends in '}' and does not decode is kCorrupt.
//
// Thread-safety: the functions are reentrant. Appends by several processes
// to one file do not interleave within a line (O_APPEND, one write each),
// but only the node's first rank is meant to append.
#ifndef CAIRN_RUNTIME_PLACEMENT_HISTORY_H_
#define CAIRN_RUNTIME_PLACEMENT_HISTORY_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "env/env.h"

namespace cairn {

struct PlacementRecord {
  double run_start = 0;      // wall seconds when this run's engine was created
  double time = 0;           // wall seconds of the decision
  std::string name;          // checkpoint name
  int64_t version = 0;
  int64_t number = 0;        // checkpoint call number in this run, from 1 (skips count)
  std::string placement;     // "memory", "ssd", "skip" (the collective decision)
  std::string rule;          // ClcRuleName of the collective rule
  bool forced = false;
  uint64_t node_bytes = 0;   // bytes of this version on this node (sum of its ranks)
  double ssd_bytes_used = 0; // PBW_used: already_written + ledger total, bytes
  double ssd_rating_bytes = 0;
  double warranty_seconds = 0;
  double bandwidth = 0;      // B_SSD, bytes/s (node)
  std::string wear_source;   // "ledger" or "device"
  double expected_lifetime_seconds = 0;   // Eq. (1)
  double estimated_lifetime_seconds = 0;  // Eq. (2); +inf allowed (write "inf")
  double slowdown = 0;       // max T_slowdown over ranks, Eq. (3)
  double slowdown_bound = 0;
  double checkpoint_seconds = 0; // this call's time inside cairn (filled after the write)
  // What the decision used ([placement] policy and the clc switches), so
  // that `cairn status` shows a verdict only where the controller applied
  // it. Optional: a record without them (older Cairn) reads as policy ""
  // (not recorded) with both tests counted as used, as status showed them.
  std::string policy;             // PlacementPolicyName: "clc", "memory", "ssd", "ratio"
  bool lifetime_checked = true;   // Eq. (1) vs (2) decided (policy clc, lifetime = true)
  bool slowdown_checked = true;   // T_slowdown vs slowdown_bound decided (clc, slowdown = true)

  friend bool operator==(const PlacementRecord&, const PlacementRecord&) = default;
};

// One JSON line, '\n'-terminated.
std::string EncodePlacementRecord(const PlacementRecord& r);

// The inverse of EncodePlacementRecord (with or without the '\n').
// kCorrupt naming `document` (the file and line) and the member's JSON
// Pointer: not JSON, not an object, a member missing or of the wrong type,
// an integer member that is not a whole number in range.
Result<PlacementRecord> DecodePlacementRecord(std::string_view line,
                                              std::string_view document = "placement record");

// <ssd_tier_root>/.status/history.jsonl. Tiers skip dot-directories, so it
// is never mistaken for a checkpoint name.
std::string PlacementHistoryPath(const std::string& ssd_tier_root);

// Appends r to the node's history, creating the directory (0700) and the
// file (0600) when needed. No fsync (informational). Errors from env (kIo,
// kNoSpace) are returned; the caller may log and carry on.
Status AppendPlacementRecord(Env* env, const std::string& ssd_tier_root, const PlacementRecord& r);

// Every record of the node's history, in file order (oldest first).
// kNotFound when there is no history file; kCorrupt naming the file, the line
// (1-based) and the member of a complete line that does not decode; torn lines
// (see above) are skipped.
Result<std::vector<PlacementRecord>> ReadPlacementHistory(Env* env,
                                                          const std::string& ssd_tier_root);

}  // namespace cairn

#endif  // CAIRN_RUNTIME_PLACEMENT_HISTORY_H_
