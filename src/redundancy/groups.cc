#include "redundancy/groups.h"

#include <algorithm>
#include <set>

namespace cairn {
namespace {

int CountNodes(const std::vector<int>& node_of_rank) {
  return static_cast<int>(std::set<int>(node_of_rank.begin(), node_of_rank.end()).size());
}

// "redundancy.scheme = rs with redundancy.parity = 2"
std::string SchemeText(const RedundancySettings& s) {
  std::string text = fmt::format("redundancy.scheme = {}", RedundancySchemeName(s.scheme));
  if (s.scheme == RedundancyScheme::kRs) text += fmt::format(" with redundancy.parity = {}", s.parity);
  return text;
}

// The group size the settings ask for on this many nodes, or kConfig.
Result<int> ChooseGroupSize(const RedundancySettings& s, int nodes) {
  const int min = MinGroupSize(s);
  if (s.group_size != 0 && s.group_size < min) {
    return Error(Code::kConfig, "redundancy.group_size = {} is too small for {} (at least {})",
                 s.group_size, SchemeText(s), min);
  }
  if (s.group_size > nodes) {
    return Error(Code::kConfig,
                 "redundancy.group_size = {} needs ranks on {} nodes, but this job has {} "
                 "node{} (a group has one rank per node)",
                 s.group_size, s.group_size, nodes, nodes == 1 ? "" : "s");
  }
  if (nodes < min) {
    return Error(Code::kConfig,
                 "{} needs ranks on at least {} nodes, but this job has {} node{} (a group has "
                 "one rank per node)",
                 SchemeText(s), min, nodes, nodes == 1 ? "" : "s");
  }
  return s.group_size != 0 ? s.group_size : std::min(kDefaultGroupNodes, nodes);
}

// Columns: column l holds the l-th rank of every node that has one, in
// rank order (so on distinct nodes).
std::vector<std::vector<int>> Columns(const std::vector<int>& node_of_rank) {
  std::vector<std::vector<int>> columns;
  std::vector<int> seen_on_node;
  for (int r = 0; r < static_cast<int>(node_of_rank.size()); ++r) {
    const auto node = static_cast<size_t>(node_of_rank[static_cast<size_t>(r)]);
    if (seen_on_node.size() <= node) seen_on_node.resize(node + 1, 0);
    const auto l = static_cast<size_t>(seen_on_node[node]++);
    if (columns.size() <= l) columns.resize(l + 1);
    columns[l].push_back(r);
  }
  return columns;
}

// Cuts one column into balanced groups of at most `size` members (more only
// where a smaller group would be below `min`).
void CutColumn(const std::vector<int>& column, int size, int min, GroupPlan* plan) {
  const int c = static_cast<int>(column.size());
  const int count = std::max(1, std::min((c + size - 1) / size, c / min));
  size_t next = 0;
  for (int g = 0; g < count; ++g) {
    const int members = c / count + (g < c % count ? 1 : 0);
    RedundancyGroup group{.id = static_cast<int>(plan->groups.size()), .members = {}};
    group.members.assign(column.begin() + static_cast<std::ptrdiff_t>(next),
                         column.begin() + static_cast<std::ptrdiff_t>(next + members));
    next += static_cast<size_t>(members);
    plan->groups.push_back(std::move(group));
  }
}

// Puts a rank whose column is too short into the smallest group with no
// rank on its node (the lowest-numbered among equals).
Status Adopt(int rank, const std::vector<int>& node_of_rank, const RedundancySettings& s,
             int nodes, GroupPlan* plan) {
  const int node = node_of_rank[static_cast<size_t>(rank)];
  RedundancyGroup* best = nullptr;
  for (RedundancyGroup& group : plan->groups) {
    const bool shares_node = std::any_of(group.members.begin(), group.members.end(), [&](int m) {
      return node_of_rank[static_cast<size_t>(m)] == node;
    });
    if (!shares_node && (best == nullptr || group.members.size() < best->members.size())) {
      best = &group;
    }
  }
  if (best == nullptr) {
    return Error(Code::kConfig,
                 "{}: rank {} on node {} has no group without a rank of its node to join "
                 "({} nodes with {} ranks: the nodes hold too different numbers of ranks)",
                 SchemeText(s), rank, node, nodes, node_of_rank.size());
  }
  best->members.push_back(rank);
  return Status::Ok();
}

}  // namespace

int MinGroupSize(const RedundancySettings& settings) {
  return settings.scheme == RedundancyScheme::kRs ? settings.parity + 1 : 2;
}

Result<GroupPlan> FormGroups(const std::vector<int>& node_of_rank,
                             const RedundancySettings& settings) {
  if (settings.scheme == RedundancyScheme::kNone) {
    return Error(Code::kInvalidArgument, "redundancy.scheme = none forms no groups");
  }
  const int nodes = CountNodes(node_of_rank);
  CAIRN_ASSIGN_OR_RETURN(const int size, ChooseGroupSize(settings, nodes));
  const int min = MinGroupSize(settings);
  GroupPlan plan;
  std::vector<int> alone;
  for (const std::vector<int>& column : Columns(node_of_rank)) {
    if (static_cast<int>(column.size()) >= min) {
      CutColumn(column, size, min, &plan);
    } else {
      alone.insert(alone.end(), column.begin(), column.end());
    }
  }
  for (int rank : alone) {
    CAIRN_RETURN_IF_ERROR(Adopt(rank, node_of_rank, settings, nodes, &plan));
  }
  plan.group_of_rank.assign(node_of_rank.size(), -1);
  plan.index_of_rank.assign(node_of_rank.size(), -1);
  for (const RedundancyGroup& group : plan.groups) {
    for (size_t i = 0; i < group.members.size(); ++i) {
      plan.group_of_rank[static_cast<size_t>(group.members[i])] = group.id;
      plan.index_of_rank[static_cast<size_t>(group.members[i])] = static_cast<int>(i);
    }
  }
  return plan;
}

StripeLayout::StripeLayout(RedundancyScheme scheme, int members, int parity)
    : scheme_(scheme), members_(members) {
  switch (scheme) {
    case RedundancyScheme::kPartner:
      data_pieces_ = 1;
      parity_rows_ = 1;
      break;
    case RedundancyScheme::kXor:
      data_pieces_ = members - 1;
      parity_rows_ = 1;
      break;
    case RedundancyScheme::kRs:
    case RedundancyScheme::kNone:
      data_pieces_ = members - parity;
      parity_rows_ = parity;
      break;
  }
}

std::vector<int> StripeLayout::ErasedSymbols(int stripe, const std::vector<bool>& lost_parts,
                                             const std::vector<bool>& lost_parity) const {
  std::vector<int> erased;
  for (int s = 0; s < symbols(); ++s) {
    const auto member = static_cast<size_t>(SymbolMember(stripe, s));
    if (s < data_pieces_ ? lost_parts[member] : lost_parity[member]) erased.push_back(s);
  }
  return erased;
}

bool StripeLayout::CanRebuild(const std::vector<bool>& lost_parts,
                              const std::vector<bool>& lost_parity) const {
  for (int t = 0; t < stripes(); ++t) {
    if (static_cast<int>(ErasedSymbols(t, lost_parts, lost_parity).size()) > parity_rows_) {
      return false;
    }
  }
  return true;
}

}  // namespace cairn
