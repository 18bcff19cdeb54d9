#include "cli/verify_redundancy.h"

#include <map>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "cli/output.h"
#include "redundancy/group_check.h"
#include "runtime/engine_redundancy.h"

namespace cairn {
namespace {

// What the checker read of one rank's copy.
struct MemberRead {
  std::optional<std::vector<uint8_t>> payload;
  std::optional<GroupParity> parity;
};

MemberRead ReadMember(const CopyInfo* c) {
  MemberRead out;
  if (c == nullptr || c->state != CopyState::kComplete) return out;
  const Tier tier = TierOf(PosixEnv(), *c);
  if (auto payload = ReadRedundancyPayload(tier, c->manifest); payload.ok()) {
    out.payload = std::move(*payload);
  }
  if (c->manifest.redundancy) {
    if (auto parity = ReadParityFile(tier, c->manifest); parity.ok()) out.parity = std::move(*parity);
  }
  return out;
}

std::string RankList(const ParityHeader& h, const std::vector<int>& members) {
  std::string out;
  for (int j : members) {
    out += fmt::format("{}{}", out.empty() ? "" : ", ", h.members[static_cast<size_t>(j)].rank);
  }
  return "[" + out + "]";
}

void Report(const RunCopies& run, const ParityHeader& h, const char* what,
            const std::vector<int>& members, const std::string& text, bool json) {
  if (json) {
    std::vector<int> ranks;
    for (int j : members) ranks.push_back(static_cast<int>(h.members[static_cast<size_t>(j)].rank));
    PrintJsonLine({{"tier", TierKindName(run.tier)}, {"name", run.name}, {"version", run.version},
                   {"group", h.group}, {"finding", what}, {"ranks", ranks}, {"problem", text}});
  } else {
    fmt::print("{} {} '{}' version {} redundancy group {}: {}\n", what, TierKindName(run.tier),
               run.name, run.version, h.group, text);
  }
}

// Checks the group whose header is `h`, its members' copies from `run`.
void CheckGroup(const RunCopies& run, const ParityHeader& h, bool json, RedundancyTotals* t) {
  std::map<int, const CopyInfo*> by_rank;
  for (const CopyInfo* c : run.copies) by_rank[c->rank] = c;
  std::vector<MemberRead> reads;
  for (const ParityMember& m : h.members) {
    auto it = by_rank.find(static_cast<int>(m.rank));
    reads.push_back(ReadMember(it == by_rank.end() ? nullptr : it->second));
  }
  std::vector<GroupMemberData> members(reads.size());
  for (size_t j = 0; j < reads.size(); ++j) {
    if (reads[j].payload) members[j].payload = std::span<const uint8_t>(*reads[j].payload);
    if (reads[j].parity) members[j].parity = &*reads[j].parity;
  }
  const GroupCheck check = CheckGroupParity(h, members);
  ++t->groups_checked;
  const char* scheme = ParitySchemeName(h.scheme);
  if (!check.parity_wrong.empty()) {
    t->parity_wrong += static_cast<int>(check.parity_wrong.size());
    Report(run, h, "PARITY-WRONG", check.parity_wrong,
           fmt::format("the {} parity of ranks {} differs from the group's data (a rebuild would "
                       "refuse it)", scheme, RankList(h, check.parity_wrong)),
           json);
  }
  if (check.payload_lost.empty()) return;
  const std::string lost = RankList(h, check.payload_lost);
  if (check.can_rebuild) {
    t->rebuildable += static_cast<int>(check.payload_lost.size());
    for (int j : check.payload_lost) {
      t->rebuildable_ranks.insert({run.name, run.version, run.run_id,
                                   static_cast<int>(h.members[static_cast<size_t>(j)].rank)});
    }
    Report(run, h, "REBUILDABLE", check.payload_lost,
           fmt::format("the parts of ranks {} are missing or damaged; the group's {} parity "
                       "rebuilds them", lost, scheme),
           json);
  } else {
    t->unrebuildable += static_cast<int>(check.payload_lost.size());
    Report(run, h, "UNREBUILDABLE", check.payload_lost,
           fmt::format("the parts of ranks {} are missing or damaged and cannot be rebuilt "
                       "(parity missing, damaged or wrong on ranks {}; {} survives {} lost "
                       "member(s) per group)",
                       lost, RankList(h, check.parity_lost), scheme, h.parity_rows),
           json);
  }
}

}  // namespace

RedundancyTotals VerifyRedundancy(const std::vector<CopyInfo>& copies, bool json) {
  RedundancyTotals t;
  for (const RunCopies& run : GroupByRun(copies)) {
    // One header per group: any protected member's parity file holds the
    // whole group's table.
    std::map<uint32_t, ParityHeader> headers;
    for (const CopyInfo* c : run.copies) {
      if (c->state != CopyState::kComplete || !c->manifest.redundancy) continue;
      if (headers.count(c->manifest.redundancy->group)) continue;
      auto parity = ReadParityFile(TierOf(PosixEnv(), *c), c->manifest);
      if (parity.ok()) headers.emplace(c->manifest.redundancy->group, std::move(parity->header));
    }
    for (const auto& [group, header] : headers) CheckGroup(run, header, json, &t);
  }
  return t;
}

}  // namespace cairn
