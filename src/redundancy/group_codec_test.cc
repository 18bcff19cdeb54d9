#include "redundancy/group_codec.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <set>

#include <gtest/gtest.h>

#include "comm/thread_comm.h"
#include "env/env.h"
#include "redundancy/group_check.h"

namespace cairn {
namespace {

constexpr uint32_t kSeed = 1124;

RedundancySettings Settings(RedundancyScheme scheme, int parity = 2, int group_size = 0) {
  return RedundancySettings{.scheme = scheme, .group_size = group_size, .parity = parity,
                            .sync = false};
}

std::vector<int> Topology(int ranks, int rpn) {
  std::vector<int> node_of_rank;
  for (int r = 0; r < ranks; ++r) node_of_rank.push_back(r / rpn);
  return node_of_rank;
}

std::vector<std::vector<uint8_t>> RandomParts(int ranks, std::mt19937& rng) {
  std::vector<std::vector<uint8_t>> parts;
  for (int r = 0; r < ranks; ++r) {
    // Sizes from empty to a few blocks, unaligned, so that padding shows.
    const size_t size = rng() % 5 == 0 ? rng() % 100 : rng() % (300 * 1024);
    std::vector<uint8_t> part(size);
    for (auto& b : part) b = static_cast<uint8_t>(rng());
    parts.push_back(std::move(part));
  }
  return parts;
}

struct Job {
  std::vector<int> topology;
  RedundancySettings settings;
  GroupPlan plan;
  std::vector<std::vector<uint8_t>> parts;
  std::vector<GroupParity> parity;
};

// Forms the groups and encodes every rank's part on ranks as threads.
void Encode(Job& job) {
  auto plan = FormGroups(job.topology, job.settings);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  job.plan = *plan;
  job.parity.resize(job.parts.size());
  std::vector<Status> status(job.parts.size());
  Status ran = RunRanks(PosixEnv(), job.topology, [&](Comm& comm) {
    const auto r = static_cast<size_t>(comm.rank());
    auto encoded = EncodeGroupParity(comm, job.plan, job.settings, 7, job.parts[r]);
    status[r] = encoded.status();
    if (encoded.ok()) job.parity[r] = std::move(encoded).value();
  });
  ASSERT_TRUE(ran.ok()) << ran.ToString();
  for (const Status& s : status) ASSERT_TRUE(s.ok()) << s.ToString();
}

// Rebuilds with the ranks on `lost_nodes` holding nothing; damage(rank,
// part, parity) may spoil what a survivor holds first.
std::vector<Result<RebuildOutcome>> Rebuild(
    Job& job, const std::set<int>& lost_nodes,
    const std::function<void(int, std::vector<uint8_t>&, GroupParity&, LocalCopy&)>& damage =
        nullptr) {
  std::vector<std::vector<uint8_t>> parts = job.parts;
  std::vector<Result<RebuildOutcome>> out;
  for (size_t r = 0; r < job.parts.size(); ++r) out.emplace_back(Error(Code::kInternal, "not run"));
  Status ran = RunRanks(PosixEnv(), job.topology, [&](Comm& comm) {
    const auto r = static_cast<size_t>(comm.rank());
    LocalCopy local;
    if (!lost_nodes.count(job.topology[r])) {
      local.part = std::span<const uint8_t>(parts[r]);
      local.parity = &job.parity[r];
      if (damage) damage(comm.rank(), parts[r], job.parity[r], local);
    }
    out[r] = RebuildGroupParts(comm, job.plan, job.settings, 7, local);
  });
  EXPECT_TRUE(ran.ok()) << ran.ToString();
  return out;
}

void ExpectRebuiltExactly(const Job& job, const std::set<int>& lost_nodes,
                          const std::vector<Result<RebuildOutcome>>& out) {
  int lost_ranks = 0;
  for (size_t r = 0; r < out.size(); ++r) {
    ASSERT_TRUE(out[r].ok()) << "rank " << r << ": " << out[r].status().ToString();
    const bool lost = lost_nodes.count(job.topology[r]) > 0;
    lost_ranks += lost;
    ASSERT_EQ(out[r]->part.has_value(), lost) << "rank " << r;
    if (!lost) continue;
    EXPECT_EQ(*out[r]->part, job.parts[r]) << "rank " << r;
    ASSERT_TRUE(out[r]->parity.has_value());
    const GroupParity& want = job.parity[r];
    const GroupParity& got = *out[r]->parity;
    EXPECT_EQ(EncodeParityHeader(got.header), EncodeParityHeader(want.header)) << "rank " << r;
    ASSERT_EQ(got.rows.size(), want.rows.size());
    EXPECT_TRUE(std::equal(got.rows.span().begin(), got.rows.span().end(),
                           want.rows.span().begin()))
        << "rank " << r;
  }
  EXPECT_EQ(out[0]->parts_rebuilt, lost_ranks);
  EXPECT_EQ(out[0]->parities_rebuilt, lost_ranks);
}

std::set<int> RandomNodes(int nodes, int count, std::mt19937& rng) {
  std::set<int> chosen;
  while (static_cast<int>(chosen.size()) < count) chosen.insert(static_cast<int>(rng() % nodes));
  return chosen;
}

// Every scheme, 4-12 ranks, 1-3 ranks per node, random part sizes; lose
// as many random nodes as the scheme survives: the rebuilt parts and parity
// equal the originals byte for byte.
TEST(GroupCodecTest, LosingWhatTheSchemeSurvivesRebuildsExactly) {
  std::printf("seed %u\n", kSeed);
  std::mt19937 rng(kSeed);
  int runs = 0;
  for (auto scheme : {RedundancyScheme::kPartner, RedundancyScheme::kXor, RedundancyScheme::kRs}) {
    for (int ranks = 4; ranks <= 12; ++ranks) {
      for (int rpn = 1; rpn <= 3; ++rpn) {
        Job job{Topology(ranks, rpn), Settings(scheme), {}, RandomParts(ranks, rng), {}};
        const int nodes = (ranks + rpn - 1) / rpn;
        if (!FormGroups(job.topology, job.settings).ok()) continue;  // too few nodes
        SCOPED_TRACE(fmt::format("seed {} {} ranks={} rpn={}", kSeed, RedundancySchemeName(scheme),
                                 ranks, rpn));
        Encode(job);
        const int survivable = scheme == RedundancyScheme::kRs ? job.settings.parity : 1;
        const std::set<int> lost = RandomNodes(nodes, survivable, rng);
        ExpectRebuiltExactly(job, lost, Rebuild(job, lost));
        ++runs;
      }
    }
  }
  EXPECT_GT(runs, 40);
}

// One encoder per rank for several versions of changing sizes, as the
// engine keeps it: each version's parity is that version's alone.
TEST(GroupCodecTest, AnEncoderKeptAcrossVersionsEncodesEachExactly) {
  std::mt19937 rng(kSeed + 5);
  Job job{Topology(6, 2), Settings(RedundancyScheme::kRs), {}, {}, {}};
  job.plan = *FormGroups(job.topology, job.settings);
  std::vector<std::vector<std::vector<uint8_t>>> versions{RandomParts(6, rng), RandomParts(6, rng)};
  job.parity.resize(6);
  Status ran = RunRanks(PosixEnv(), job.topology, [&](Comm& comm) {
    const auto r = static_cast<size_t>(comm.rank());
    GroupEncoder encoder(&comm, &job.plan, job.settings);
    for (const auto& parts : versions) {
      EXPECT_TRUE(encoder.Encode(7, parts[r], &job.parity[r]).ok());
    }
  });
  ASSERT_TRUE(ran.ok());
  job.parts = versions.back();
  ExpectRebuiltExactly(job, {1}, Rebuild(job, {1}));
}

// One group lost all its parity files but no part (nothing to rebuild
// there, and no header to do it with) while another rebuilds a lost part:
// both finish together.
TEST(GroupCodecTest, AGroupWithoutParityWaitsForTheOthers) {
  std::mt19937 rng(kSeed + 6);
  Job job{Topology(8, 2), Settings(RedundancyScheme::kXor), {}, RandomParts(8, rng), {}};
  Encode(job);
  auto out = Rebuild(job, {}, [](int rank, std::vector<uint8_t>&, GroupParity&, LocalCopy& local) {
    if (rank % 2 == 1) local.parity = nullptr;  // group 1: ranks 1, 3, 5, 7
    if (rank == 2) local.part.reset();          // group 0 loses one part
  });
  for (size_t r = 0; r < out.size(); ++r) ASSERT_TRUE(out[r].ok()) << out[r].status().ToString();
  EXPECT_EQ(*out[2]->part, job.parts[2]);
  EXPECT_EQ(out[0]->parts_rebuilt, 1);
  EXPECT_EQ(out[0]->parities_rebuilt, 0);  // group 1 must encode again
  EXPECT_FALSE(out[1]->parity.has_value());
}

TEST(GroupCodecTest, EmptyPartsAreProtectedToo) {
  Job job{Topology(4, 1), Settings(RedundancyScheme::kRs), {}, std::vector<std::vector<uint8_t>>(4),
          {}};
  Encode(job);
  EXPECT_EQ(job.parity[0].header.chunk_size, 0u);
  ExpectRebuiltExactly(job, {0, 3}, Rebuild(job, {0, 3}));
}

TEST(GroupCodecTest, NothingLostRebuildsNothing) {
  std::mt19937 rng(kSeed + 1);
  Job job{Topology(6, 2), Settings(RedundancyScheme::kXor), {}, RandomParts(6, rng), {}};
  Encode(job);
  for (const auto& out : Rebuild(job, {})) {
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_FALSE(out->part.has_value());
    EXPECT_EQ(out->parts_rebuilt, 0);
  }
}

TEST(GroupCodecTest, OneNodeMoreThanTheSchemeSurvivesIsAnErrorNamingTheNodes) {
  std::mt19937 rng(kSeed + 2);
  for (auto [scheme, lost] : std::vector<std::pair<RedundancyScheme, std::set<int>>>{
           {RedundancyScheme::kXor, {1, 4}},
           {RedundancyScheme::kPartner, {2, 3}},
           {RedundancyScheme::kRs, {0, 2, 5}}}) {
    Job job{Topology(6, 1), Settings(scheme), {}, RandomParts(6, rng), {}};
    Encode(job);
    for (const auto& out : Rebuild(job, lost)) {
      ASSERT_FALSE(out.ok());
      EXPECT_EQ(out.status().code(), Code::kCorrupt);
      const std::string& m = out.status().message();
      std::string nodes;
      for (int n : lost) nodes += (nodes.empty() ? "" : ", ") + std::to_string(n);
      EXPECT_NE(m.find("(nodes [" + nodes + "])"), std::string::npos) << m;
      const std::string survives =
          fmt::format("{} survives {} lost member", RedundancySchemeName(scheme),
                      scheme == RedundancyScheme::kRs ? 2 : 1);
      EXPECT_NE(m.find(survives), std::string::npos) << m;
    }
  }
}

// A survivor's parity row spoilt after encoding: its CRC32C catches it, and
// it is never used. With xor that is one erasure too many (an error); with
// rs and 2 parities the other symbols still rebuild the exact bytes.
TEST(GroupCodecTest, CorruptParityIsDetectedAndNeverUsed) {
  std::mt19937 rng(kSeed + 3);
  auto spoil_rank_2 = [](int rank, std::vector<uint8_t>&, GroupParity& parity, LocalCopy&) {
    if (rank == 2) parity.rows.data()[parity.rows.size() / 2] ^= 0x5a;
  };
  Job xor_job{Topology(6, 1), Settings(RedundancyScheme::kXor), {}, RandomParts(6, rng), {}};
  Encode(xor_job);
  for (const auto& out : Rebuild(xor_job, {4}, spoil_rank_2)) {
    ASSERT_FALSE(out.ok());
    EXPECT_NE(out.status().message().find("parity lost or corrupt on ranks [2, 4]"),
              std::string::npos)
        << out.status().ToString();
  }
  Job rs_job{Topology(6, 1), Settings(RedundancyScheme::kRs), {}, RandomParts(6, rng), {}};
  Encode(rs_job);
  auto out = Rebuild(rs_job, {4}, spoil_rank_2);
  ASSERT_TRUE(out[4].ok()) << out[4].status().ToString();
  EXPECT_EQ(*out[4]->part, rs_job.parts[4]);
  // Rank 2's parity is rebuilt too, from the others.
  ASSERT_TRUE(out[2]->parity.has_value());
  EXPECT_EQ(out[0]->parities_rebuilt, 2);
}

// A survivor whose part no longer matches what was encoded (a bit flipped
// after the checkpoint) counts as lost, not as data to rebuild from.
TEST(GroupCodecTest, ASurvivorsChangedPartIsNotUsed) {
  std::mt19937 rng(kSeed + 4);
  Job job{Topology(8, 2), Settings(RedundancyScheme::kRs), {}, RandomParts(8, rng), {}};
  for (auto& part : job.parts) part.resize(std::max<size_t>(part.size(), 10));
  Encode(job);
  auto out = Rebuild(job, {1}, [](int rank, std::vector<uint8_t>& part, GroupParity&, LocalCopy&) {
    if (rank == 0) part[3] ^= 1;
  });
  for (size_t r = 0; r < out.size(); ++r) ASSERT_TRUE(out[r].ok()) << out[r].status().ToString();
  EXPECT_EQ(*out[2]->part, job.parts[2]);
  EXPECT_EQ(*out[0]->part, job.parts[0]);  // rebuilt as it was encoded
  EXPECT_EQ(out[0]->parts_rebuilt, 3);
}

// Parts of several slices (kSliceBytes), unaligned, so the encode and the
// rebuild cross slice boundaries and pad only the slice at a part's end:
// the rows equal a whole-chunk re-encode (CheckGroupParity), and losing a
// node brings every byte back.
TEST(GroupCodecTest, PartsOfSeveralSlicesEncodeAndRebuildExactly) {
  std::printf("seed %u\n", kSeed + 5);
  std::mt19937_64 rng(kSeed + 5);
  struct Case {
    RedundancyScheme scheme;
    int ranks;
  };
  // Groups of one rank per node; at most 2 data pieces, to keep it small.
  for (const Case& c : {Case{RedundancyScheme::kPartner, 3}, Case{RedundancyScheme::kXor, 3},
                        Case{RedundancyScheme::kRs, 3}, Case{RedundancyScheme::kRs, 4}}) {
    SCOPED_TRACE(fmt::format("seed {} {} ranks={}", kSeed + 5, RedundancySchemeName(c.scheme),
                             c.ranks));
    Job job{Topology(c.ranks, 1), Settings(c.scheme), {}, {}, {}};
    for (int r = 0; r < c.ranks; ++r) {
      std::vector<uint8_t> part(2 * kSliceBytes + rng() % (2 * kSliceBytes) + 1);
      for (auto& b : part) b = static_cast<uint8_t>(rng());
      job.parts.push_back(std::move(part));
    }
    Encode(job);
    std::vector<GroupMemberData> members;
    for (int r = 0; r < c.ranks; ++r) {
      members.push_back({std::span<const uint8_t>(job.parts[r]), &job.parity[r]});
    }
    const GroupCheck check = CheckGroupParity(job.parity[0].header, members);
    EXPECT_TRUE(check.parity_wrong.empty());
    EXPECT_EQ(check.rows_unchecked, 0);
    EXPECT_GT(check.rows_checked, 0);
    const int survivable = c.scheme == RedundancyScheme::kRs ? job.settings.parity : 1;
    std::mt19937 node_rng(static_cast<unsigned>(rng()));
    const std::set<int> lost = RandomNodes(c.ranks, survivable, node_rng);
    ExpectRebuiltExactly(job, lost, Rebuild(job, lost));
  }
}

}  // namespace
}  // namespace cairn
