#include "redundancy/group_check.h"

#include <cstdio>
#include <random>

#include <gtest/gtest.h>

#include "comm/thread_comm.h"
#include "env/env.h"

namespace cairn {
namespace {

constexpr uint32_t kSeed = 2611;

// One group of `ranks` members (one per node), each part random and of its
// own size, encoded over ranks as threads; the members' data as the
// checker sees it.
struct EncodedGroup {
  std::vector<std::vector<uint8_t>> parts;
  std::vector<GroupParity> parity;

  std::vector<GroupMemberData> Members() const {
    std::vector<GroupMemberData> out(parts.size());
    for (size_t j = 0; j < parts.size(); ++j) {
      out[j].payload = std::span<const uint8_t>(parts[j]);
      out[j].parity = &parity[j];
    }
    return out;
  }
};

EncodedGroup Encode(RedundancyScheme scheme, int ranks, int parity_rows) {
  std::mt19937 rng(kSeed);
  EncodedGroup g;
  std::vector<int> topology;
  for (int r = 0; r < ranks; ++r) {
    topology.push_back(r);
    g.parts.emplace_back(rng() % (200 * 1024) + 1);
    for (auto& b : g.parts.back()) b = static_cast<uint8_t>(rng());
  }
  const RedundancySettings settings{.scheme = scheme, .group_size = 0, .parity = parity_rows};
  auto plan = FormGroups(topology, settings);
  EXPECT_TRUE(plan.ok());
  g.parity.resize(static_cast<size_t>(ranks));
  Status ran = RunRanks(PosixEnv(), topology, [&](Comm& comm) {
    auto encoded = EncodeGroupParity(comm, *plan, settings, 3, g.parts[comm.rank()]);
    EXPECT_TRUE(encoded.ok()) << encoded.status().ToString();
    if (encoded.ok()) g.parity[static_cast<size_t>(comm.rank())] = std::move(encoded).value();
  });
  EXPECT_TRUE(ran.ok());
  return g;
}

TEST(GroupCheckTest, EveryRowOfEverySchemeMatchesItsReencode) {
  std::printf("seed %u\n", kSeed);
  for (auto [scheme, ranks, rows] : {std::tuple{RedundancyScheme::kPartner, 4, 1},
                                     std::tuple{RedundancyScheme::kXor, 5, 1},
                                     std::tuple{RedundancyScheme::kRs, 6, 2}}) {
    EncodedGroup g = Encode(scheme, ranks, rows);
    GroupCheck check = CheckGroupParity(g.parity[0].header, g.Members());
    EXPECT_EQ(check.rows_checked, ranks * rows) << RedundancySchemeName(scheme);
    EXPECT_EQ(check.rows_unchecked, 0);
    EXPECT_TRUE(check.parity_wrong.empty());
    EXPECT_TRUE(check.can_rebuild);
  }
}

TEST(GroupCheckTest, ARowThatDiffersFromTheDataIsNamedEvenWithItsCrcsRight) {
  EncodedGroup g = Encode(RedundancyScheme::kXor, 4, 1);
  // The stored row and its CRC32Cs agree, but not with the data: a wrong
  // encode, not a damaged file.
  g.parity[2].rows.data()[10] ^= 1;
  ParityMember& m = g.parity[0].header.members[2];
  m.parity_crcs = BlockCrcs(g.parity[2].Row(0), g.parity[0].header.block_size);
  GroupCheck check = CheckGroupParity(g.parity[0].header, g.Members());
  EXPECT_EQ(check.parity_wrong, std::vector<int>{2});
  EXPECT_TRUE(check.can_rebuild);  // no part lost
  // Without all the data of its stripe a row cannot be judged (a rebuild
  // then checks what it makes against the CRC32Cs of the header instead).
  std::vector<GroupMemberData> members = g.Members();
  members[3].payload.reset();
  check = CheckGroupParity(g.parity[0].header, members);
  EXPECT_EQ(check.payload_lost, std::vector<int>{3});
  EXPECT_TRUE(check.parity_wrong.empty());
  EXPECT_EQ(check.rows_unchecked, 3);
}

TEST(GroupCheckTest, LostMembersAreJudgedAsARebuildWould) {
  EncodedGroup g = Encode(RedundancyScheme::kRs, 5, 2);
  std::vector<GroupMemberData> members = g.Members();
  members[1] = GroupMemberData{};
  members[4] = GroupMemberData{};
  GroupCheck check = CheckGroupParity(g.parity[0].header, members);
  EXPECT_EQ(check.payload_lost, (std::vector<int>{1, 4}));
  EXPECT_EQ(check.parity_lost, (std::vector<int>{1, 4}));
  EXPECT_TRUE(check.can_rebuild);  // rs with 2 parities
  EXPECT_GT(check.rows_unchecked, 0);
  members[0].payload.reset();
  EXPECT_FALSE(CheckGroupParity(g.parity[0].header, members).can_rebuild);
}

}  // namespace
}  // namespace cairn
