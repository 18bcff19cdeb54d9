// VersionedArray on one rank without MPI (local window, local channel):
// the three implementations against a reference model, the errors the API
// promises, restore, draining and reading back, and reload of a state
// copied out and back as a checkpoint restart does.
#include "varray/varray.h"
#include "varray/varray_test_names.h"

#include <cstring>
#include <map>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace cairn {
namespace {

VarrayOptions Options(VarrayKind kind, uint64_t length = 1000) {
  VarrayOptions o;
  o.name = "t";
  o.length = length;
  o.elem_size = 8;
  o.block_size = 64;
  o.kind = kind;
  o.keep = 3;
  return o;
}

std::unique_ptr<VersionedArray> Make(const VarrayOptions& o, Env* env = nullptr) {
  auto array = VersionedArray::Create(NewSingleComm(), env != nullptr ? env : PosixEnv(), o);
  EXPECT_TRUE(array.ok()) << array.status().ToString();
  return array.ok() ? std::move(array).value() : nullptr;
}

std::vector<uint64_t> ReadAll(VersionedArray& a, int64_t version) {
  std::vector<uint64_t> out(a.geometry().length);
  Status s = a.GetVersion(version, 0, out.size(), out.data());
  EXPECT_TRUE(s.ok()) << s.ToString();
  return out;
}

class EveryKind : public testing::TestWithParam<VarrayKind> {};

TEST_P(EveryKind, VersionsReadBackWhatTheModelHolds) {
  const uint32_t seed = 2024;
  SCOPED_TRACE(testing::Message() << "seed " << seed);
  auto a = Make(Options(GetParam()));
  ASSERT_NE(a, nullptr);
  std::mt19937_64 rng(seed);
  std::vector<uint64_t> current(1000, 0);
  std::map<int64_t, std::vector<uint64_t>> model;
  for (int v = 0; v < 12; ++v) {
    for (int op = 0; op < 10; ++op) {
      const uint64_t n = 1 + rng() % 50, at = rng() % (1000 - n + 1);
      std::vector<uint64_t> data(n);
      for (auto& x : data) x = rng();
      if (op % 3 == 0) {
        ASSERT_TRUE(a->Acc(at, n, data.data(), RmaElement::kUint64).ok());
        for (uint64_t i = 0; i < n; ++i) current[at + i] += data[i];
      } else {
        ASSERT_TRUE(a->Put(at, n, data.data()).ok());
        std::copy(data.begin(), data.end(), current.begin() + static_cast<long>(at));
      }
    }
    std::vector<uint64_t> got(1000);
    ASSERT_TRUE(a->Get(0, 1000, got.data()).ok());
    ASSERT_TRUE(a->Wait().ok());
    ASSERT_EQ(got, current);
    model[v] = current;
    ASSERT_TRUE(a->VersionInc().ok());
    for (int64_t k = a->stats().oldest_in_memory; k < a->version(); ++k) {
      ASSERT_EQ(ReadAll(*a, k), model[k]) << "version " << k;
    }
  }
  EXPECT_EQ(a->version(), 12);
  EXPECT_EQ(a->stats().oldest_in_memory, 9);
  EXPECT_EQ(a->stats().kind, GetParam());
  EXPECT_TRUE(a->Close().ok());
}

TEST_P(EveryKind, ErrorsNameTheCause) {
  auto a = Make(Options(GetParam()));
  ASSERT_NE(a, nullptr);
  uint64_t x = 1;
  Status s = a->Put(999, 2, &x);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("[999, 1001)"), std::string::npos) << s.message();
  s = a->Acc(0, 1, &x, RmaElement::kInt32);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("4-byte"), std::string::npos) << s.message();
  for (int v = 0; v < 5; ++v) ASSERT_TRUE(a->VersionInc().ok());
  s = a->GetVersion(0, 0, 1, &x);
  EXPECT_EQ(s.code(), Code::kNotFound);
  EXPECT_NE(s.message().find("no longer kept"), std::string::npos) << s.message();
  s = a->GetVersion(9, 0, 1, &x);
  EXPECT_EQ(s.code(), Code::kNotFound);
  s = a->Restore(5);
  EXPECT_EQ(s.code(), Code::kNotFound);
  ASSERT_TRUE(a->Close().ok());
  EXPECT_EQ(a->Put(0, 1, &x).code(), Code::kInvalidArgument);
}

TEST_P(EveryKind, RestoreRollsBack) {
  auto a = Make(Options(GetParam(), 100));
  ASSERT_NE(a, nullptr);
  std::vector<uint64_t> ones(100, 1), twos(100, 2), got(100);
  ASSERT_TRUE(a->Put(0, 100, ones.data()).ok());
  ASSERT_TRUE(a->VersionInc().ok());
  ASSERT_TRUE(a->Put(0, 50, twos.data()).ok());
  ASSERT_TRUE(a->VersionInc().ok());
  ASSERT_TRUE(a->Put(10, 10, twos.data()).ok());
  ASSERT_TRUE(a->Restore(0).ok());
  ASSERT_TRUE(a->Get(0, 100, got.data()).ok());
  ASSERT_TRUE(a->Wait().ok());
  EXPECT_EQ(got, ones);
  EXPECT_EQ(a->version(), 2);  // the open version keeps its number
  std::vector<uint64_t> v1 = ReadAll(*a, 1);
  EXPECT_EQ(v1[0], 2u);
  EXPECT_EQ(v1[99], 1u);
}

TEST_P(EveryKind, DrainedVersionsReadBackFromStorage) {
  auto env = NewMemEnv();
  VarrayOptions o = Options(GetParam(), 200);
  o.drain_dir = "/drain";
  auto a = Make(o, env.get());
  ASSERT_NE(a, nullptr);
  for (uint64_t v = 0; v < 8; ++v) {
    std::vector<uint64_t> fill(200, v + 100);
    ASSERT_TRUE(a->Put(0, 200, fill.data()).ok());
    ASSERT_TRUE(a->VersionInc().ok());
  }
  ASSERT_TRUE(a->WaitDrains().ok());
  EXPECT_EQ(a->stats().versions_drained, 5);
  for (int64_t v = 0; v < 8; ++v) {
    EXPECT_EQ(ReadAll(*a, v), std::vector<uint64_t>(200, static_cast<uint64_t>(v) + 100))
        << "version " << v;
  }
  // A flipped byte in a drained file is found, not returned.
  auto text = env->ReadFileToString("/drain/t/r0/v1.vad");
  ASSERT_TRUE(text.ok());
  (*text)[60] ^= 1;
  ASSERT_TRUE(env->WriteFileAtomic("/drain/t/r0/v1.vad", text->data(), text->size(), false).ok());
  uint64_t x;
  EXPECT_EQ(a->GetVersion(1, 0, 1, &x).code(), Code::kCorrupt);
}

TEST_P(EveryKind, ReloadTakesARestoredState) {
  auto a = Make(Options(GetParam(), 300));
  ASSERT_NE(a, nullptr);
  std::vector<uint64_t> fill(300, 7), other(300, 8);
  ASSERT_TRUE(a->Put(0, 300, fill.data()).ok());
  ASSERT_TRUE(a->VersionInc().ok());
  // What a checkpoint saves, then a restart puts back.
  std::vector<uint8_t> saved(a->state().begin(), a->state().end());
  ASSERT_TRUE(a->Put(0, 300, other.data()).ok());
  ASSERT_TRUE(a->VersionInc().ok());
  ASSERT_TRUE(a->VersionInc().ok());
  std::memcpy(a->state().data(), saved.data(), saved.size());
  ASSERT_TRUE(a->Reload().ok());
  EXPECT_EQ(a->version(), 1);
  EXPECT_EQ(ReadAll(*a, 0), fill);
  EXPECT_EQ(ReadAll(*a, 1), fill);
  // Garbage instead of a state is refused.
  std::memset(a->state().data(), 0xab, 64);
  Status s = a->Reload();
  EXPECT_EQ(s.code(), Code::kCorrupt) << s.ToString();
}

INSTANTIATE_TEST_SUITE_P(Varray, EveryKind,
                         testing::Values(VarrayKind::kLogRma, VarrayKind::kLogMessage,
                                         VarrayKind::kFlat),
                         VarrayKindTestName);

TEST(Varray, BadOptionsAreNamed) {
  VarrayOptions o = Options(VarrayKind::kLogRma);
  o.block_size = 12;
  auto a = VersionedArray::Create(NewSingleComm(), PosixEnv(), o);
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("block_size 12"), std::string::npos);
  o = Options(VarrayKind::kLogRma);
  o.keep = 0;
  a = VersionedArray::Create(NewSingleComm(), PosixEnv(), o);
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("keep"), std::string::npos);
  o = Options(VarrayKind::kLogRma);
  o.name = "../x";
  EXPECT_FALSE(VersionedArray::Create(NewSingleComm(), PosixEnv(), o).ok());
}

TEST(Varray, VersionIncWithOutstandingGetsIsRefused) {
  // The flat array's get stays outstanding until Wait.
  auto a = Make(Options(VarrayKind::kFlat));
  ASSERT_NE(a, nullptr);
  uint64_t x;
  ASSERT_TRUE(a->Get(0, 1, &x).ok());
  Status s = a->VersionInc();
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_NE(s.message().find("wait"), std::string::npos) << s.message();
  ASSERT_TRUE(a->Wait().ok());
  EXPECT_TRUE(a->VersionInc().ok());
}

}  // namespace
}  // namespace cairn
