#include "cli/verify_restorable.h"

#include <gtest/gtest.h>

namespace cairn {
namespace {

// A complete copy of `rank` of version v of "heat" by run 7 of `nranks`,
// its pages referring to `references`.
CopyInfo Copy(int64_t version, int rank, int nranks = 2, std::vector<int64_t> references = {}) {
  CopyInfo c;
  c.state = CopyState::kComplete;
  c.name = "heat";
  c.version = version;
  c.rank = rank;
  c.nranks = nranks;
  c.run_id = 7;
  c.manifest.references = std::move(references);
  return c;
}

TEST(VerifyRestorableTest, AVersionMissingARankOnEveryTierIsNotRestorable) {
  // Version 1 on two tiers for rank 0 only; version 2 whole.
  std::vector<CopyInfo> copies = {Copy(1, 0), Copy(1, 0), Copy(2, 0), Copy(2, 1)};
  copies[1].tier = TierKind::kPfs;
  RestorableTotals t = CheckRestorable(copies, {}, {}, /*json=*/false);
  EXPECT_EQ(t.versions_not_restorable, 1);
  EXPECT_TRUE(t.names_without_version.empty());
}

TEST(VerifyRestorableTest, AnUnusableCopyHoldsNothingAndARebuildablePartDoes) {
  std::vector<CopyInfo> copies = {Copy(1, 0), Copy(1, 1)};
  RestorableTotals damaged = CheckRestorable(copies, {&copies[1]}, {}, false);
  EXPECT_EQ(damaged.versions_not_restorable, 1);
  EXPECT_EQ(damaged.names_without_version, std::vector<std::string>{"heat"});
  RestorableTotals rebuilt = CheckRestorable(copies, {&copies[1]}, {{"heat", 1, 7, 1}}, false);
  EXPECT_EQ(rebuilt.versions_not_restorable, 0);
}

TEST(VerifyRestorableTest, AVersionReferringToAnUnrestorableOneIsNotRestorable) {
  // [dedup] incremental: 2 and 3 refer to the full version 1, of which
  // rank 1's copy is gone; 4 is full again.
  std::vector<CopyInfo> copies = {Copy(1, 0),         Copy(2, 0, 2, {1}), Copy(2, 1, 2, {1}),
                                  Copy(3, 0, 2, {1}), Copy(3, 1, 2, {1}), Copy(4, 0),
                                  Copy(4, 1)};
  RestorableTotals t = CheckRestorable(copies, {}, {}, false);
  EXPECT_EQ(t.versions_not_restorable, 3);
  EXPECT_TRUE(t.names_without_version.empty());  // 4 is
  copies.resize(5);
  EXPECT_EQ(CheckRestorable(copies, {}, {}, false).names_without_version,
            std::vector<std::string>{"heat"});
}

}  // namespace
}  // namespace cairn
