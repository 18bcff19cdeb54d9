#include "comm/comm.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "comm/thread_comm.h"

namespace cairn {
namespace {

struct Agreed {
  Status status;
  Comm::AgreeDetail detail;
};

// Every rank calls Agree with local[rank]; what each rank got back.
std::vector<Agreed> AgreeOnRanks(const std::vector<Status>& local) {
  std::vector<Agreed> out(local.size());
  Status started = RunRanks(PosixEnv(), std::vector<int>(local.size(), 0), [&](Comm& comm) {
    Agreed& mine = out[static_cast<size_t>(comm.rank())];
    mine.status = comm.Agree(local[static_cast<size_t>(comm.rank())], &mine.detail);
  });
  EXPECT_TRUE(started.ok()) << started.ToString();
  return out;
}

TEST(CommAgreeTest, AllSucceedingIsOkEverywhere) {
  for (const Agreed& a : AgreeOnRanks({Status::Ok(), Status::Ok(), Status::Ok()})) {
    EXPECT_TRUE(a.status.ok()) << a.status.ToString();
    EXPECT_EQ(a.detail.failed_ranks, 0);
    EXPECT_FALSE(a.detail.any_no_space);
  }
}

TEST(CommAgreeTest, TheLowestFailingRankWinsWithItsCodeAndMessage) {
  std::vector<Status> local{Status::Ok(), Status::Ok(),
                            Error(Code::kCorrupt, "'part.r000002' fails its CRC at byte 4096"),
                            Error(Code::kConfig, "key 'retention.keep': expected an integer")};
  std::vector<Agreed> agreed = AgreeOnRanks(local);
  for (size_t r = 0; r < agreed.size(); ++r) {
    const Status& s = agreed[r].status;
    SCOPED_TRACE("rank " + std::to_string(r) + ": " + s.ToString());
    // A remote CORRUPT arrives as itself, not as an I/O or comm error.
    EXPECT_EQ(s.code(), Code::kCorrupt);
    EXPECT_EQ(s.message().rfind("rank 2: 'part.r000002' fails its CRC at byte 4096", 0), 0u);
    EXPECT_NE(s.message().find("(and 1 more rank)"), std::string::npos);
    EXPECT_EQ(agreed[r].detail.failed_ranks, 2);
    EXPECT_FALSE(agreed[r].detail.any_no_space);
  }
  // The other failing rank keeps its own cause beside the agreed one.
  EXPECT_NE(agreed[3].status.message().find("; rank 3: key 'retention.keep'"), std::string::npos);
  EXPECT_EQ(agreed[0].status.message().find("retention.keep"), std::string::npos);
}

TEST(CommAgreeTest, ALoneFailureOnTheLastRankReachesRankZero) {
  std::vector<Status> local(4, Status::Ok());
  local[3] = Error(Code::kConfig, "'/etc/cairn/r3.toml': line 2: expected '='");
  std::vector<Agreed> agreed = AgreeOnRanks(local);
  EXPECT_EQ(agreed[0].status.code(), Code::kConfig);
  EXPECT_EQ(agreed[0].status.message(), "rank 3: '/etc/cairn/r3.toml': line 2: expected '='");
  EXPECT_EQ(agreed[0].detail.failed_ranks, 1);
}

TEST(CommAgreeTest, NoSpaceAnywhereIsToldEverywhere) {
  std::vector<Status> local{Error(Code::kIo, "rank 0 broke"), Status::Ok(),
                            Error(Code::kNoSpace, "tier 'memory' is full")};
  for (const Agreed& a : AgreeOnRanks(local)) {
    EXPECT_EQ(a.status.code(), Code::kIo);
    EXPECT_TRUE(a.detail.any_no_space);
    EXPECT_EQ(a.detail.failed_ranks, 2);
  }
}

TEST(CommAgreeTest, OneRankNeedsNoPrefix) {
  auto comm = NewSingleComm();
  Comm::AgreeDetail detail;
  Status s = comm->Agree(Error(Code::kNotFound, "no version"), &detail);
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_EQ(s.message(), "no version");
  EXPECT_EQ(detail.failed_ranks, 1);
  EXPECT_TRUE(comm->Agree(Status::Ok()).ok());
}

TEST(ThreadCommTest, CollectivesSeeEveryRank) {
  std::vector<int> nodes{0, 0, 1, 1, 1};
  std::vector<std::string> received(nodes.size());
  std::vector<std::vector<int64_t>> gathered(nodes.size());
  std::vector<double> sums(nodes.size());
  Status started = RunRanks(PosixEnv(), nodes, [&](Comm& comm) {
    const size_t r = static_cast<size_t>(comm.rank());
    EXPECT_EQ(comm.nodes(), 2);
    EXPECT_EQ(comm.ranks_on_node(), comm.node() == 0 ? 2 : 3);
    EXPECT_TRUE(comm.NodeBarrier().ok());
    std::string bytes = r == 3 ? std::string(1001, 'x').append("end") : "";
    EXPECT_TRUE(comm.Broadcast(&bytes, 3).ok());
    received[r] = bytes;
    gathered[r] = comm.Allgather(static_cast<int64_t>(r * 10)).value();
    std::vector<double> sum{0.5};
    EXPECT_TRUE(comm.AllreduceSum(sum).ok());
    sums[r] = sum[0];
  });
  ASSERT_TRUE(started.ok()) << started.ToString();
  for (size_t r = 0; r < nodes.size(); ++r) {
    EXPECT_EQ(received[r], std::string(1001, 'x').append("end"));
    EXPECT_EQ(gathered[r], (std::vector<int64_t>{0, 10, 20, 30, 40}));
    EXPECT_EQ(sums[r], 2.5);
  }
}

TEST(ThreadCommTest, SendRecvAroundARingDeliversEachNeighboursBytes) {
  const int n = 5;
  std::vector<std::vector<uint8_t>> got(n);
  Status started = RunRanks(PosixEnv(), std::vector<int>(n, 0), [&](Comm& comm) {
    const int r = comm.rank();
    std::vector<uint8_t> mine(100 + static_cast<size_t>(r), static_cast<uint8_t>(r + 1));
    std::vector<uint8_t> from_left(100 + static_cast<size_t>((r + n - 1) % n));
    Status s = comm.SendRecv((r + 1) % n, mine, (r + n - 1) % n, from_left);
    EXPECT_TRUE(s.ok()) << s.ToString();
    got[static_cast<size_t>(r)] = from_left;
  });
  ASSERT_TRUE(started.ok()) << started.ToString();
  for (int r = 0; r < n; ++r) {
    const int left = (r + n - 1) % n;
    EXPECT_EQ(got[static_cast<size_t>(r)],
              std::vector<uint8_t>(100 + static_cast<size_t>(left), static_cast<uint8_t>(left + 1)));
  }
}

TEST(ThreadCommTest, SendRecvNamesASenderOfAnotherLengthAndKeepsOrder) {
  std::vector<Status> first(2);
  std::vector<uint8_t> second(3);
  Status started = RunRanks(PosixEnv(), {0, 1}, [&](Comm& comm) {
    if (comm.rank() == 0) {
      std::vector<uint8_t> a(8, 1), b{7, 8, 9};
      EXPECT_TRUE(comm.SendRecv(1, a, Comm::kNoPeer, {}).ok());
      EXPECT_TRUE(comm.SendRecv(1, b, Comm::kNoPeer, {}).ok());
    } else {
      std::vector<uint8_t> want4(4);
      first[1] = comm.SendRecv(Comm::kNoPeer, {}, 0, want4);
      EXPECT_TRUE(comm.SendRecv(Comm::kNoPeer, {}, 0, second).ok());
    }
  });
  ASSERT_TRUE(started.ok());
  EXPECT_EQ(first[1].code(), Code::kComm);
  EXPECT_EQ(first[1].message(), "rank 1: rank 0 sent 8 bytes where 4 were expected");
  EXPECT_EQ(second, (std::vector<uint8_t>{7, 8, 9}));
}

TEST(SingleCommTest, SendRecvToItselfCopiesAndRefusesOtherPeers) {
  auto comm = NewSingleComm();
  std::vector<uint8_t> in{1, 2, 3}, out(3);
  ASSERT_TRUE(comm->SendRecv(0, in, 0, out).ok());
  EXPECT_EQ(out, in);
  EXPECT_EQ(comm->SendRecv(1, in, 0, out).code(), Code::kInvalidArgument);
}

// An Env that starts only `allowed` threads.
class ThreadLimitEnv final : public EnvWrapper {
 public:
  explicit ThreadLimitEnv(int allowed) : EnvWrapper(PosixEnv()), allowed_(allowed) {}
  Result<std::unique_ptr<Thread>> StartThread(const ThreadOptions& options,
                                              std::function<void()> body) override {
    if (allowed_-- <= 0) return Error(Code::kInternal, "cannot start a thread: limit");
    return EnvWrapper::StartThread(options, std::move(body));
  }

 private:
  int allowed_;
};

TEST(ThreadCommTest, NoRankRunsWhenOneCannotStart) {
  ThreadLimitEnv env(2);
  int ran = 0;
  Status s = RunRanks(&env, {0, 0, 0, 0}, [&](Comm& comm) {
    ++ran;  // never: would race, and would hang in the barrier below
    (void)comm.Barrier();
  });
  EXPECT_EQ(s.code(), Code::kInternal);
  EXPECT_NE(s.message().find("starting rank 2"), std::string::npos) << s.ToString();
  EXPECT_EQ(ran, 0);
}

}  // namespace
}  // namespace cairn
