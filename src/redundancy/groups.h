// Redundancy groups: which ranks protect each other's parts, formed from the
// (virtual) node topology so that no two members of a group share a node,
// and, within a group, the stripe layout that says which member stores the
// parity of which pieces, so that no member holds the parity of its own
// data. docs/redundancy.md draws both.
// Thread-safety: values and pure functions.
#ifndef CAIRN_REDUNDANCY_GROUPS_H_
#define CAIRN_REDUNDANCY_GROUPS_H_

#include <vector>

#include "base/config.h"
#include "base/status.h"

namespace cairn {

// group_size = 0: one rank from each of up to this many nodes.
inline constexpr int kDefaultGroupNodes = 8;

struct RedundancyGroup {
  int id = 0;
  // Ranks in ring order, each on a node of its own.
  std::vector<int> members;
};

struct GroupPlan {
  std::vector<RedundancyGroup> groups;
  std::vector<int> group_of_rank;  // groups[group_of_rank[r]] holds rank r
  std::vector<int> index_of_rank;  // ... at members[index_of_rank[r]]

  const RedundancyGroup& GroupOf(int rank) const {
    return groups[static_cast<size_t>(group_of_rank[static_cast<size_t>(rank)])];
  }
};

// The fewest members a group of the scheme can have: 2 for partner and xor,
// parity + 1 for rs (a stripe needs at least one data piece).
int MinGroupSize(const RedundancySettings& settings);

// Groups for ranks 0..n-1, rank r on node node_of_rank[r]. The ranks at the
// same position on their nodes (the first rank of every node, the second,
// ...) are cut into groups of group_size (balanced, none larger unless a
// smaller one would fall below MinGroupSize); ranks left alone at their
// position join the smallest group without a rank of their node.
// kConfig naming the keys and the node count when the topology cannot
// satisfy the settings (group_size larger than the nodes, too few nodes for
// the scheme, a rank no group can take); kInvalidArgument for scheme none.
Result<GroupPlan> FormGroups(const std::vector<int>& node_of_rank,
                             const RedundancySettings& settings);

// Within a group of `members` members, member j's part is cut into
// data_pieces() pieces of equal length (the group's largest part, padded);
// stripe t combines one piece from each of data_pieces() members into
// parity_rows() parity rows, stored one each on other members:
//   parity row p of stripe t: member (t + p) mod n
//   data piece q of stripe t: member (t + parity_rows() + q) mod n, its piece q
// (partner: the one piece of member t + 1, copied to member t). Every member
// stores parity_rows() rows, row p of stripe (j - p) mod n, and no member
// holds a parity row of a stripe it gives data to.
class StripeLayout {
 public:
  // REQUIRES: members >= MinGroupSize of the scheme; scheme not none.
  StripeLayout(RedundancyScheme scheme, int members, int parity);

  RedundancyScheme scheme() const { return scheme_; }
  int members() const { return members_; }
  int stripes() const { return members_; }
  int data_pieces() const { return data_pieces_; }
  int parity_rows() const { return parity_rows_; }
  // Symbols of a stripe: data pieces 0..data_pieces()-1, then parity rows.
  int symbols() const { return data_pieces_ + parity_rows_; }

  int DataMember(int stripe, int piece) const {
    return Mod(stripe + parity_rows_ + piece);
  }
  int ParityMember(int stripe, int row) const { return Mod(stripe + row); }
  int SymbolMember(int stripe, int symbol) const {
    return symbol < data_pieces_ ? DataMember(stripe, symbol)
                                 : ParityMember(stripe, symbol - data_pieces_);
  }
  // The stripe whose data piece q member j gives, and whose row p it stores.
  int StripeOfPiece(int member, int piece) const {
    return Mod(member - parity_rows_ - piece);
  }
  int StripeOfRow(int member, int row) const { return Mod(member - row); }
  // How many lost members of a group the scheme survives in every case.
  int Survives() const { return parity_rows_; }
  // The symbols of `stripe` gone with the members' lost parts and lost
  // parity rows. REQUIRES: both sizes == members().
  std::vector<int> ErasedSymbols(int stripe, const std::vector<bool>& lost_parts,
                                 const std::vector<bool>& lost_parity) const;
  // Whether every stripe keeps enough symbols to rebuild the rest (losing
  // whole members: partner survives any losses but two neighbours, xor and
  // rs up to parity_rows()).
  bool CanRebuild(const std::vector<bool>& lost_parts, const std::vector<bool>& lost_parity) const;

 private:
  int Mod(int x) const { return ((x % members_) + members_) % members_; }

  RedundancyScheme scheme_;
  int members_;
  int data_pieces_;
  int parity_rows_;
};

}  // namespace cairn

#endif  // CAIRN_REDUNDANCY_GROUPS_H_
