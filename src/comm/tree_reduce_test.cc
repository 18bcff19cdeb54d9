#include "comm/tree_reduce.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "comm/thread_comm.h"

namespace cairn {
namespace {

// Every rank contributes its rank number; a merge concatenates, so the
// result shows that each merge saw the lower ranks on the left.
class Concatenation final : public TreeReduction {
 public:
  Concatenation(int rank, bool fails) : text_(std::to_string(rank)), rank_(rank), fails_(fails) {}
  Status Merge(std::string_view right) override {
    if (fails_) return Error(Code::kCorrupt, "bad message on rank {}", rank_);
    text_ += ",";
    text_ += right;
    return Status::Ok();
  }
  std::string Encode() const override { return text_; }

 private:
  std::string text_;
  int rank_;
  bool fails_;
};

std::vector<Result<std::string>> Reduce(int nranks, int failing_rank) {
  std::vector<Result<std::string>> out(static_cast<size_t>(nranks), Status(Code::kInternal, "unset"));
  Status started = RunRanks(PosixEnv(), std::vector<int>(static_cast<size_t>(nranks), 0), [&](Comm& comm) {
    Concatenation reduction(comm.rank(), comm.rank() == failing_rank);
    out[static_cast<size_t>(comm.rank())] = AllreduceTree(comm, reduction);
  });
  EXPECT_TRUE(started.ok()) << started.ToString();
  return out;
}

TEST(TreeReduceTest, EveryRankGetsTheMergeOfAllInRankOrder) {
  for (int n : {1, 2, 3, 4, 5, 7, 8}) {
    std::string expected = "0";
    for (int r = 1; r < n; ++r) expected += "," + std::to_string(r);
    for (const auto& got : Reduce(n, -1)) {
      ASSERT_TRUE(got.ok()) << n << " ranks: " << got.status().ToString();
      EXPECT_EQ(*got, expected) << n << " ranks";
    }
  }
}

TEST(TreeReduceTest, AFailedMergeOnOneRankIsEveryRanksError) {
  // Rank 2 merges rank 3's part in the first round of 4 ranks.
  for (const auto& got : Reduce(4, 2)) {
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), Code::kCorrupt);
    EXPECT_NE(got.status().message().find("bad message on rank 2"), std::string::npos)
        << got.status().ToString();
  }
}

}  // namespace
}  // namespace cairn
