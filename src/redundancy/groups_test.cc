#include "redundancy/groups.h"

#include <set>

#include <gtest/gtest.h>

namespace cairn {
namespace {

RedundancySettings Settings(RedundancyScheme scheme, int group_size, int parity = 2) {
  return RedundancySettings{.scheme = scheme, .group_size = group_size, .parity = parity,
                            .sync = false};
}

// n nodes of rpn ranks, the last one `last` ranks (0: rpn), as MpiComm's
// virtual nodes number them.
std::vector<int> Topology(int nodes, int rpn, int last = 0) {
  std::vector<int> node_of_rank;
  for (int n = 0; n < nodes; ++n) {
    const int ranks = n == nodes - 1 && last > 0 ? last : rpn;
    for (int i = 0; i < ranks; ++i) node_of_rank.push_back(n);
  }
  return node_of_rank;
}

// Every rank in exactly one group, no two members of a group on one node,
// sizes between the scheme's minimum and what the settings allow.
void ExpectSound(const GroupPlan& plan, const std::vector<int>& node_of_rank,
                 const RedundancySettings& s, int nodes) {
  std::vector<int> seen(node_of_rank.size(), 0);
  const int asked = s.group_size != 0 ? s.group_size : std::min(kDefaultGroupNodes, nodes);
  for (const RedundancyGroup& g : plan.groups) {
    std::set<int> group_nodes;
    for (size_t i = 0; i < g.members.size(); ++i) {
      const int r = g.members[i];
      ++seen[static_cast<size_t>(r)];
      EXPECT_TRUE(group_nodes.insert(node_of_rank[static_cast<size_t>(r)]).second)
          << "group " << g.id << " has two ranks on node " << node_of_rank[static_cast<size_t>(r)];
      EXPECT_EQ(plan.group_of_rank[static_cast<size_t>(r)], g.id);
      EXPECT_EQ(plan.index_of_rank[static_cast<size_t>(r)], static_cast<int>(i));
    }
    EXPECT_GE(static_cast<int>(g.members.size()), MinGroupSize(s));
    // Larger than asked only where the column could not be cut evenly
    // above the minimum, or a lone rank joined.
    EXPECT_LE(static_cast<int>(g.members.size()), std::max(asked, 2 * MinGroupSize(s)) + 1);
  }
  for (size_t r = 0; r < seen.size(); ++r) EXPECT_EQ(seen[r], 1) << "rank " << r;
}

TEST(FormGroupsTest, ManyTopologiesGiveSoundGroupsOrAConfigError) {
  int formed = 0, refused = 0;
  for (auto scheme : {RedundancyScheme::kPartner, RedundancyScheme::kXor, RedundancyScheme::kRs}) {
    for (int nodes = 1; nodes <= 14; ++nodes) {
      for (int rpn = 1; rpn <= 4; ++rpn) {
        for (int last = 0; last <= rpn; ++last) {
          for (int size : {0, 2, 3, 4, 5, 8, 9}) {
            for (int parity : {1, 2, 3}) {
              if (scheme != RedundancyScheme::kRs && parity != 2) continue;
              const auto topo = Topology(nodes, rpn, last);
              const auto s = Settings(scheme, size, parity);
              SCOPED_TRACE(fmt::format("{} nodes x {} (last {}), group_size {}, {} parity {}",
                                       nodes, rpn, last, size, RedundancySchemeName(scheme),
                                       parity));
              auto plan = FormGroups(topo, s);
              const bool enough = nodes >= std::max(size, MinGroupSize(s)) &&
                                  (size == 0 || size >= MinGroupSize(s));
              if (!enough) {
                ASSERT_FALSE(plan.ok());
                EXPECT_EQ(plan.status().code(), Code::kConfig);
                EXPECT_NE(plan.status().message().find("redundancy."), std::string::npos);
                ++refused;
                continue;
              }
              if (!plan.ok()) {
                // Only a lone rank with no group to join may refuse.
                EXPECT_NE(plan.status().message().find("no group without a rank of its node"),
                          std::string::npos) << plan.status().ToString();
                ++refused;
                continue;
              }
              ExpectSound(*plan, topo, s, nodes);
              ++formed;
            }
          }
        }
      }
    }
  }
  std::printf("formed %d plans, refused %d\n", formed, refused);
  EXPECT_GT(formed, 1000);
}

TEST(FormGroupsTest, DefaultIsOneRankFromEachOfUpToEightNodes) {
  auto plan = FormGroups(Topology(8, 2), Settings(RedundancyScheme::kXor, 0));
  ASSERT_TRUE(plan.ok());
  ASSERT_EQ(plan->groups.size(), 2u);
  EXPECT_EQ(plan->groups[0].members, (std::vector<int>{0, 2, 4, 6, 8, 10, 12, 14}));
  EXPECT_EQ(plan->groups[1].members, (std::vector<int>{1, 3, 5, 7, 9, 11, 13, 15}));
  // 12 nodes: two balanced groups of 6 rather than 8 + 4.
  auto twelve = FormGroups(Topology(12, 1), Settings(RedundancyScheme::kXor, 0));
  ASSERT_TRUE(twelve.ok());
  ASSERT_EQ(twelve->groups.size(), 2u);
  EXPECT_EQ(twelve->groups[0].members.size(), 6u);
}

TEST(FormGroupsTest, TooFewNodesNamesTheKeysAndTheNodeCount) {
  auto big = FormGroups(Topology(3, 2), Settings(RedundancyScheme::kXor, 4));
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().code(), Code::kConfig);
  EXPECT_EQ(big.status().message(),
            "redundancy.group_size = 4 needs ranks on 4 nodes, but this job has 3 nodes (a group "
            "has one rank per node)");
  auto rs = FormGroups(Topology(2, 4), Settings(RedundancyScheme::kRs, 0, 2));
  ASSERT_FALSE(rs.ok());
  EXPECT_EQ(rs.status().message(),
            "redundancy.scheme = rs with redundancy.parity = 2 needs ranks on at least 3 nodes, "
            "but this job has 2 nodes (a group has one rank per node)");
  auto one = FormGroups(Topology(1, 4), Settings(RedundancyScheme::kPartner, 0));
  ASSERT_FALSE(one.ok());
  EXPECT_NE(one.status().message().find("this job has 1 node "), std::string::npos);
  EXPECT_EQ(FormGroups(Topology(4, 1), Settings(RedundancyScheme::kNone, 0)).status().code(),
            Code::kInvalidArgument);
}

TEST(FormGroupsTest, ALoneRankJoinsAGroupWithoutItsNode) {
  // Node 0 has three ranks, nodes 1 and 2 one each: ranks 1 and 2 are the
  // only second and third ranks of any node.
  auto plan = FormGroups({0, 0, 0, 1, 2}, Settings(RedundancyScheme::kXor, 2));
  ASSERT_FALSE(plan.ok());  // every group holds a rank of node 0
  EXPECT_NE(plan.status().message().find("rank 1 on node 0"), std::string::npos);
  auto fits = FormGroups({0, 0, 1, 1, 2}, Settings(RedundancyScheme::kXor, 2));
  ASSERT_TRUE(fits.ok()) << fits.status().ToString();
  ExpectSound(*fits, {0, 0, 1, 1, 2}, Settings(RedundancyScheme::kXor, 2), 3);
}

// No member stores a parity row of a stripe it gives data to, every member
// stores parity_rows() rows, and every piece of every member is in exactly
// one stripe: for every scheme and group size.
TEST(StripeLayoutTest, NoMemberHoldsTheParityOfItsOwnData) {
  for (auto scheme : {RedundancyScheme::kPartner, RedundancyScheme::kXor, RedundancyScheme::kRs}) {
    for (int n = 2; n <= 12; ++n) {
      for (int parity = 1; parity < n; ++parity) {
        if (scheme != RedundancyScheme::kRs && parity > 1) continue;
        const StripeLayout l(scheme, n, parity);
        SCOPED_TRACE(fmt::format("{} n={} parity={}", RedundancySchemeName(scheme), n, parity));
        std::set<std::pair<int, int>> pieces, rows;
        for (int t = 0; t < l.stripes(); ++t) {
          std::set<int> data_members;
          for (int q = 0; q < l.data_pieces(); ++q) {
            const int j = l.DataMember(t, q);
            EXPECT_TRUE(data_members.insert(j).second);
            EXPECT_EQ(l.StripeOfPiece(j, q), t);
            EXPECT_TRUE(pieces.insert({j, q}).second);
          }
          for (int p = 0; p < l.parity_rows(); ++p) {
            const int j = l.ParityMember(t, p);
            EXPECT_EQ(data_members.count(j), 0u) << "member " << j << " stripe " << t;
            EXPECT_EQ(l.StripeOfRow(j, p), t);
            EXPECT_TRUE(rows.insert({j, p}).second);
          }
        }
        EXPECT_EQ(pieces.size(), static_cast<size_t>(n * l.data_pieces()));
        EXPECT_EQ(rows.size(), static_cast<size_t>(n * l.parity_rows()));
      }
    }
  }
}

TEST(StripeLayoutTest, WhatEachSchemeSurvives) {
  const int n = 6;
  auto lose = [&](std::vector<int> members) {
    std::vector<bool> lost(n, false);
    for (int m : members) lost[static_cast<size_t>(m)] = true;
    return lost;
  };
  const StripeLayout partner(RedundancyScheme::kPartner, n, 1);
  EXPECT_TRUE(partner.CanRebuild(lose({2}), lose({2})));
  EXPECT_TRUE(partner.CanRebuild(lose({1, 3}), lose({1, 3})));   // not neighbours
  EXPECT_FALSE(partner.CanRebuild(lose({2, 3}), lose({2, 3})));  // neighbours
  const StripeLayout xor_layout(RedundancyScheme::kXor, n, 1);
  EXPECT_TRUE(xor_layout.CanRebuild(lose({4}), lose({4})));
  EXPECT_FALSE(xor_layout.CanRebuild(lose({1, 4}), lose({1, 4})));
  EXPECT_FALSE(xor_layout.CanRebuild(lose({1}), lose({4})));  // a part and another's parity
  const StripeLayout rs(RedundancyScheme::kRs, n, 2);
  EXPECT_TRUE(rs.CanRebuild(lose({0, 5}), lose({0, 5})));
  EXPECT_FALSE(rs.CanRebuild(lose({0, 3, 5}), lose({0, 3, 5})));
}

}  // namespace
}  // namespace cairn
