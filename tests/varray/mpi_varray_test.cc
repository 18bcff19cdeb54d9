// Versioned arrays on 1, 2, 4 and 8 MPI ranks against a reference model
// of the array's history, for each implementation: every kept version
// reads back what was written before its version_inc, with many ranks
// putting at once into neighbouring ranges (sharing the blocks at their
// borders) and accumulating into one shared range; restore; log cleaning
// in a small log under load; the three implementations end with the same
// bytes; and the compare-and-swap hazard of Open MPI 4.x is detected (the
// test runs under plain mpirun, where MPI_Compare_and_swap would crash).
// MPI starts with MPI_THREAD_MULTIPLE, for the message protocol's servers
// (tests/mpi_test_main.h).
#include <mpi.h>

#include <cstdio>
#include <map>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "comm/mpi_comm.h"
#include "mpi_test_main.h"
#include "varray/varray.h"
#include "varray/varray_test_names.h"

namespace cairn {
namespace {

constexpr uint32_t kSeed = 20261124;

using cairn_test::Rank;
using cairn_test::Size;

std::unique_ptr<VersionedArray> Make(const VarrayOptions& o) {
  auto comm = NewMpiComm(MPI_COMM_WORLD, 0);
  EXPECT_TRUE(comm.ok()) << comm.status().ToString();
  auto array = VersionedArray::Create(std::move(comm).value(), PosixEnv(), o);
  EXPECT_TRUE(array.ok()) << array.status().ToString();
  return array.ok() ? std::move(array).value() : nullptr;
}

VarrayOptions Options(VarrayKind kind, uint64_t length) {
  VarrayOptions o;
  o.name = "mpi";
  o.length = length;
  o.elem_size = 8;
  o.block_size = 128;  // the paper's micro-benchmark block
  o.kind = kind;
  o.keep = 4;
  return o;
}

// One version's writes, the same plan on every rank. Rank r writes in
// window (r + version) % P of a layout shifted by 5 * version elements:
// windows are disjoint but adjacent, so the blocks at their borders take
// first puts from two ranks at once (each rank also writes the first and
// last 3 elements of its window). The last 40 elements take only accs
// (every rank adds r + 1).
struct Plan {
  struct Put {
    int rank;
    uint64_t index;
    std::vector<uint64_t> values;
  };
  std::vector<Put> puts;
};
constexpr uint64_t kAccElems = 40, kMaxShift = 64;

Plan MakePlan(uint64_t length, int ranks, int version, std::mt19937_64& rng) {
  Plan plan;
  const uint64_t window = (length - kAccElems - kMaxShift) / ranks;
  const uint64_t shift = 5 * static_cast<uint64_t>(version) % kMaxShift;
  auto add = [&](int r, uint64_t at, uint64_t n) {
    Plan::Put put{r, at, std::vector<uint64_t>(n)};
    for (auto& v : put.values) v = rng();
    plan.puts.push_back(std::move(put));
  };
  for (int r = 0; r < ranks; ++r) {
    const uint64_t start = ((r + version) % ranks) * window + shift;
    add(r, start, 3);
    add(r, start + window - 3, 3);
    for (int op = 0; op < 4; ++op) {
      const uint64_t n = 1 + rng() % 60;
      add(r, start + rng() % (window - n), n);
    }
  }
  return plan;
}

// Runs `versions` planned versions; checks every kept version after each
// version_inc; returns the final contents.
std::vector<uint64_t> RunHistory(VersionedArray& a, int versions) {
  const uint64_t length = a.geometry().length;
  std::mt19937_64 rng(kSeed);
  std::vector<uint64_t> current(length, 0);
  std::map<int64_t, std::vector<uint64_t>> model;
  std::vector<uint64_t> ones(kAccElems);
  for (int v = 0; v < versions; ++v) {
    const Plan plan = MakePlan(length, Size(), v, rng);
    for (const Plan::Put& p : plan.puts) {
      // Ranks write disjoint ranges; a rank's own ranges may overlap, and
      // the model applies them in the rank's order.
      std::copy(p.values.begin(), p.values.end(), current.begin() + static_cast<long>(p.index));
      if (p.rank == Rank()) {
        EXPECT_TRUE(a.Put(p.index, p.values.size(), p.values.data()).ok());
      }
    }
    std::fill(ones.begin(), ones.end(), static_cast<uint64_t>(Rank() + 1));
    EXPECT_TRUE(a.Acc(length - kAccElems, kAccElems, ones.data(), RmaElement::kUint64).ok());
    for (int r = 0; r < Size(); ++r) {
      for (uint64_t i = length - kAccElems; i < length; ++i) current[i] += static_cast<uint64_t>(r + 1);
    }
    model[v] = current;
    Status inc = a.VersionInc();
    EXPECT_TRUE(inc.ok()) << inc.ToString();
    for (int64_t k = a.stats().oldest_in_memory; k < a.version(); ++k) {
      std::vector<uint64_t> got(length);
      EXPECT_TRUE(a.GetVersion(k, 0, length, got.data()).ok());
      EXPECT_EQ(got, model[k]) << "version " << k << " on rank " << Rank();
    }
  }
  std::vector<uint64_t> got(length);
  EXPECT_TRUE(a.Get(0, length, got.data()).ok());
  EXPECT_TRUE(a.Wait().ok());
  EXPECT_EQ(got, current);
  return got;
}

class EveryKind : public testing::TestWithParam<VarrayKind> {};

TEST_P(EveryKind, HistoryMatchesTheModel) {
  if (Rank() == 0) std::printf("seed %u\n", kSeed);
  auto a = Make(Options(GetParam(), 600 * static_cast<uint64_t>(Size()) + kAccElems + kMaxShift));
  ASSERT_NE(a, nullptr);
  RunHistory(*a, 8);
  EXPECT_TRUE(a->Close().ok());
}

TEST_P(EveryKind, RestoreRollsEveryRankBack) {
  auto a = Make(Options(GetParam(), 100 * static_cast<uint64_t>(Size())));
  ASSERT_NE(a, nullptr);
  const uint64_t n = a->geometry().length;
  // Each rank writes the next rank's partition: every write is remote.
  const uint64_t per = n / Size();
  const uint64_t target = (static_cast<uint64_t>(Rank() + 1) % Size()) * per;
  std::vector<uint64_t> mine(per, 10 + Rank()), other(per, 99);
  ASSERT_TRUE(a->Put(target, per, mine.data()).ok());
  ASSERT_TRUE(a->VersionInc().ok());
  ASSERT_TRUE(a->Put(target, per, other.data()).ok());
  ASSERT_TRUE(a->VersionInc().ok());
  ASSERT_TRUE(a->Put(target, per / 2, mine.data()).ok());
  ASSERT_TRUE(a->Restore(0).ok());
  std::vector<uint64_t> got(n);
  ASSERT_TRUE(a->Get(0, n, got.data()).ok());
  ASSERT_TRUE(a->Wait().ok());
  for (int r = 0; r < Size(); ++r) {
    const int writer = (r + Size() - 1) % Size();
    EXPECT_EQ(got[r * per], static_cast<uint64_t>(10 + writer)) << "partition " << r;
  }
}

INSTANTIATE_TEST_SUITE_P(Mpi, EveryKind,
                         testing::Values(VarrayKind::kLogRma, VarrayKind::kLogMessage,
                                         VarrayKind::kFlat),
                         VarrayKindTestName);

TEST(Varray, ThreeImplementationsAgree) {
  std::vector<std::vector<uint64_t>> ends;
  for (VarrayKind kind : {VarrayKind::kLogRma, VarrayKind::kLogMessage, VarrayKind::kFlat}) {
    auto a = Make(Options(kind, 300 * static_cast<uint64_t>(Size()) + kAccElems + kMaxShift));
    ASSERT_NE(a, nullptr);
    ends.push_back(RunHistory(*a, 5));
  }
  EXPECT_EQ(ends[0], ends[1]);
  EXPECT_EQ(ends[0], ends[2]);
}

TEST(Varray, CleaningUnderLoadKeepsEveryKeptVersion) {
  VarrayOptions o = Options(VarrayKind::kLogRma, 600 * static_cast<uint64_t>(Size()) + kAccElems + kMaxShift);
  o.keep = 2;
  const Geometry g = *Geometry::Make(o.length, 8, o.block_size, Size());
  // 3 partitions' worth of blocks: the three versions kept use at most
  // the partition (44 blocks) and the blocks the two newer ones rewrote,
  // so cleaning runs about every other version_inc.
  o.log_capacity = LogLayout::CapacityFor(g, 3 * g.blocks_per_rank());
  auto a = Make(o);
  ASSERT_NE(a, nullptr);
  RunHistory(*a, 16);
  uint64_t cleanings = a->stats().cleanings;
  MPI_Allreduce(MPI_IN_PLACE, &cleanings, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_GT(cleanings, 0u);
}

TEST(Varray, CompareAndSwapHazardIsDetected) {
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(version, &length);
  const bool open_mpi_4 = std::string(version).find("Open MPI v4.") != std::string::npos;
  const char* osc = std::getenv("OMPI_MCA_osc");
  const bool hazard = open_mpi_4 && (osc == nullptr || std::string(osc) != "sm");
  auto a = Make(Options(VarrayKind::kLogRma, 1000));
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->stats().compare_and_swap, !hazard);
  EXPECT_EQ(a->stats().kind, VarrayKind::kLogRma);
  // Asking for compare-and-swap where it would crash gets the message
  // protocol instead (with a warning), never a crash.
  VarrayOptions cas = Options(VarrayKind::kLogRma, 1000);
  cas.atomics = VarrayAtomics::kCompareAndSwap;
  auto b = Make(cas);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->stats().kind, hazard ? VarrayKind::kLogMessage : VarrayKind::kLogRma);
  uint64_t x = 5, y = 0;
  ASSERT_TRUE(b->Put(999, 1, &x).ok());
  ASSERT_TRUE(b->Get(999, 1, &y).ok());
  ASSERT_TRUE(b->Wait().ok());
  EXPECT_EQ(y, 5u);
}

TEST(Varray, CollectiveErrorsReachEveryRank) {
  auto a = Make(Options(VarrayKind::kFlat, 1000));
  ASSERT_NE(a, nullptr);
  uint64_t x = 0;
  // Only the last rank leaves a get outstanding: every rank's version_inc
  // fails, with that rank's reason.
  if (Rank() == Size() - 1) {
    ASSERT_TRUE(a->Get(0, 1, &x).ok());
  }
  Status s = a->VersionInc();
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  if (Size() > 1) {
    EXPECT_NE(s.message().find("rank " + std::to_string(Size() - 1)), std::string::npos)
        << s.message();
  }
  EXPECT_TRUE(a->Wait().ok());
  EXPECT_TRUE(a->VersionInc().ok());
}

}  // namespace
}  // namespace cairn
