// cairn inspect NAME VERSION: every copy of one version, rank by rank: where
// it is, which run wrote it, its files and regions, and whether every block
// passes its CRC. Copies are shown run by run (cli/inventory.h, GroupByRun),
// each run closed by a line saying whether its ranks make it whole.
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cli/inventory.h"
#include "cli/output.h"
#include "cli/store_commands.h"
#include "format/manifest.h"
#include "runtime/catalog.h"
#include "runtime/engine_dedup.h"
#include "runtime/part_io.h"

namespace cairn {
namespace {

const char* FileKindName(FileKind kind) {
  switch (kind) {
    case FileKind::kPart: return "part";
    case FileKind::kRouted: return "routed";
    case FileKind::kParity: return "parity";
    case FileKind::kRedundancy: return "redundancy";
  }
  return "?";
}

const char* CopyStateName(CopyState state) {
  switch (state) {
    case CopyState::kComplete: return "complete";
    case CopyState::kIncomplete: return "incomplete (no manifest)";
    case CopyState::kDamaged: return "damaged";
  }
  return "?";
}

// What a file holds: a part file's regions (as a table cell and as JSON),
// a routed file's logical name, or ECC parity.
struct FileContents {
  std::string text = "-";
  nlohmann::ordered_json regions = nlohmann::ordered_json::array();
};

// A paged ([dedup]) part: its regions, and its pages by kind with the
// versions they refer to (docs/dedup.md).
std::string DescribePagedPart(const Tier& tier, const CopyInfo& c, const FileEntry& f,
                              nlohmann::ordered_json* regions) {
  auto copy = PagedCopy::Load(tier, c.name, c.version, f);
  if (!copy.ok()) return "paged: " + copy.status().message();
  const PagesHeader& h = (*copy)->header();
  std::string text;
  for (const auto& r : h.regions) {
    text += fmt::format("{}{}:{}x{}", text.empty() ? "" : " ", r.id, r.count, r.elem_size);
    regions->push_back({{"id", r.id}, {"count", r.count}, {"elem_size", r.elem_size}});
  }
  std::map<PageKind, uint64_t> kinds;
  std::set<std::string> targets;
  for (const PageRecord& p : h.pages) {
    ++kinds[p.kind];
    if (p.kind == PageKind::kRemote) targets.insert(fmt::format("rank {}", p.rank));
    if (p.kind == PageKind::kPrevious) targets.insert(fmt::format("v{} rank {}", p.version, p.rank));
  }
  text += fmt::format("; {} pages of {} ({}): {} stored, {} local-dup, {} remote, {} previous",
                      h.pages.size(), h.page_size, PageHashKindName(h.hash), kinds[PageKind::kData],
                      kinds[PageKind::kLocalDup], kinds[PageKind::kRemote], kinds[PageKind::kPrevious]);
  if (!targets.empty()) {
    std::string list;
    for (const auto& t : targets) list += (list.empty() ? "" : ", ") + t;
    text += "; refers to " + list;
  }
  return text;
}

FileContents DescribeContents(const Tier& tier, const CopyInfo& c, const FileEntry& f) {
  FileContents out;
  if (f.kind == FileKind::kRouted) {
    out.text = "file " + f.logical;
  } else if (f.kind == FileKind::kParity) {
    // Encoded after the commit (docs/ecc.md): when it began to protect.
    out.text = fmt::format("ECC parity, protecting from {:.3f} s after the copy's creation",
                           c.manifest.ecc_protected - c.manifest.created);
  } else if (f.kind == FileKind::kRedundancy && c.manifest.redundancy) {
    const Manifest::Redundancy& r = *c.manifest.redundancy;
    out.text = fmt::format("{} parity, group {} of {} members, {} row(s)",
                           ParitySchemeName(r.scheme), r.group, r.members, r.parity_rows);
  } else if (f.kind == FileKind::kPart && IsPagedPart(tier, c.name, c.version, f)) {
    out.text = DescribePagedPart(tier, c, f, &out.regions);
  } else if (auto header = ReadPartHeader(tier, c.name, c.version, f); header.ok()) {
    out.text.clear();
    for (const auto& r : header->regions) {
      out.text += fmt::format("{}{}:{}x{}", out.text.empty() ? "" : " ", r.id, r.count, r.elem_size);
      out.regions.push_back({{"id", r.id}, {"count", r.count}, {"elem_size", r.elem_size}});
    }
  }
  return out;
}

// The run a line belongs to: "<run id> of <nranks>", "-" parts unknown.
std::string RunCell(const RunCopies& run) {
  return fmt::format("{} of {}", RunIdText(run.run_id),
                     run.nranks > 0 ? std::to_string(run.nranks) : "?");
}

// The members every JSON line of a copy starts with.
JsonObject CopyJson(const RunCopies& run, const CopyInfo& c) {
  JsonObject o;
  o["tier"] = TierKindName(c.tier);
  o["node"] = c.node;
  o["run_id"] = run.run_id == 0 ? JsonObject() : JsonObject(run.run_id);
  o["nranks"] = run.nranks;
  o["rank"] = c.rank;
  return o;
}

// A copy that is not complete: one line saying why.
void ShowUnusableCopy(const RunCopies& run, const CopyInfo& c, bool json, Table& table) {
  std::string state = c.state == CopyState::kDamaged
                          ? fmt::format("{}: {}", CopyStateName(c.state), c.problem)
                          : CopyStateName(c.state);
  if (json) {
    JsonObject o = CopyJson(run, c);
    o["state"] = state;
    PrintJsonLine(o);
  } else {
    table.Add({TierKindName(c.tier), RunCell(run), c.node, std::to_string(c.rank), "-", "-", "-",
               state});
  }
}

// A complete copy: one line per file, each checked against its CRCs.
void ShowCompleteCopy(const RunCopies& run, const CopyInfo& c, bool json, Table& table) {
  const Tier tier = TierOf(PosixEnv(), c);
  for (const auto& f : c.manifest.files) {
    Status crc = VerifyFile(tier, c.name, c.version, f);
    FileContents contents = DescribeContents(tier, c, f);
    std::string status = crc.ok() ? "ok" : crc.ToString();
    if (json) {
      JsonObject o = CopyJson(run, c);
      o["file"] = f.name;
      o["kind"] = FileKindName(f.kind);
      o["bytes"] = f.size;
      o["regions"] = std::move(contents.regions);
      o["crc_ok"] = crc.ok();
      o["crc"] = status;
      PrintJsonLine(o);
    } else {
      table.Add({TierKindName(c.tier), RunCell(run), c.node, std::to_string(c.rank), f.name,
                 HumanBytes(f.size), contents.text, status});
    }
  }
}

}  // namespace

int RunInspect(const std::string& config_path, const std::string& name, int64_t version,
               bool json) {
  auto config = LoadCliConfig(config_path);
  if (!config.ok()) return ReportError("inspect", config.status());
  auto copies = TakeInventory(PosixEnv(), *config);
  if (!copies.ok()) return ReportError("inspect", copies.status());
  Table table({"TIER", "RUN", "NODE", "RANK", "FILE", "BYTES", "REGIONS", "CRC"});
  std::vector<std::string> summaries;
  for (const RunCopies& run : GroupByRun(*copies)) {
    if (run.name != name || run.version != version) continue;
    for (const CopyInfo* c : run.copies) {
      if (c->state == CopyState::kComplete) {
        ShowCompleteCopy(run, *c, json, table);
      } else {
        ShowUnusableCopy(run, *c, json, table);
      }
    }
    const RunRedundancy redundancy = RedundancyOf(run);
    summaries.push_back(fmt::format(
        "{} tier, run {}: {}/{} ranks, {}; redundancy {}{}", TierKindName(run.tier),
        RunIdText(run.run_id), run.CompleteRanks(),
        run.nranks > 0 ? std::to_string(run.nranks) : "?",
        run.complete() ? "complete" : "incomplete", redundancy.Text(run),
        redundancy.protected_ranks == 0 || redundancy.complete ? "" : " (parity incomplete)"));
  }
  if (summaries.empty()) {
    return ReportError("inspect",
                       fmt::format("no copy of '{}' version {} in {}", name, version,
                                   DescribeSearchedTiers(PosixEnv(), *config)),
                       kExitNothingFound);
  }
  if (!json) {
    table.Print();
    for (const std::string& line : summaries) fmt::print("{}\n", line);
  }
  return kExitOk;
}

}  // namespace cairn
