#include "storage/tier.h"

#include <stdlib.h>

#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "env/fault_env.h"

namespace cairn {
namespace {

class TierTest : public ::testing::Test {
 protected:
  void SetUp() override {
    mem_ = NewMemEnv();
    fault_ = std::make_unique<FaultEnv>(mem_.get());
    TierConfig config;
    config.capacity = 1000;
    tier_ = std::make_unique<Tier>(fault_.get(), TierKind::kSsd, "/ssd/0", config);
  }
  std::unique_ptr<Env> mem_;
  std::unique_ptr<FaultEnv> fault_;
  std::unique_ptr<Tier> tier_;
};

TEST_F(TierTest, CommittedFilesAreListed) {
  ASSERT_TRUE(tier_->PutFile("heat", 3, "a", "hello").ok());
  ASSERT_TRUE(tier_->PutFile("heat", 10, "b", "x").ok());
  EXPECT_EQ(*tier_->Names(), std::vector<std::string>{"heat"});
  EXPECT_EQ(tier_->VersionDir("heat", 42), "/ssd/0/heat/v0000000042");
  ASSERT_TRUE(mem_->CreateDirs("/ssd/0/heat/v42").ok());  // not a version directory
  EXPECT_EQ(*tier_->Versions("heat"), (std::vector<int64_t>{3, 10}));
  EXPECT_EQ(*tier_->Files("heat", 3), std::vector<std::string>{"a"});
  EXPECT_EQ(*tier_->GetFile("heat", 3, "a"), "hello");
  EXPECT_EQ(*tier_->UsedBytes(), 6u);
}

// A file read from storage is never trusted to be small (manifests are read
// with format/manifest.h's kMaxManifestBytes).
TEST_F(TierTest, GetFileRefusesAFileLongerThanItsLimit) {
  ASSERT_TRUE(tier_->PutFile("heat", 3, "a", "hello").ok());
  EXPECT_EQ(*tier_->GetFile("heat", 3, "a", 5), "hello");
  auto longer = tier_->GetFile("heat", 3, "a", 4);
  EXPECT_EQ(longer.status().code(), Code::kInvalidArgument);
  EXPECT_NE(longer.status().message().find("/ssd/0/heat/v0000000003/a"), std::string::npos)
      << longer.status().ToString();
}

TEST_F(TierTest, UncommittedFileLeavesNothing) {
  {
    auto pending = tier_->Create("heat", 1, "a", 3);
    ASSERT_TRUE(pending.ok());
    ASSERT_TRUE((*pending)->file().Append("abc", 3).ok());
  }
  EXPECT_EQ(*tier_->Files("heat", 1), std::vector<std::string>{});
}

TEST_F(TierTest, CommitSurvivesPowerLoss) {
  ASSERT_TRUE(tier_->PutFile("heat", 1, "a", "durable").ok());
  ASSERT_TRUE(fault_->DropUnsyncedData().ok());
  EXPECT_EQ(*tier_->GetFile("heat", 1, "a"), "durable");
}

TEST_F(TierTest, FullTierIsRefusedUpFront) {
  ASSERT_TRUE(tier_->PutFile("heat", 1, "a", std::string(900, 'x')).ok());
  auto pending = tier_->Create("heat", 2, "b", 200);
  ASSERT_FALSE(pending.ok());
  EXPECT_EQ(pending.status().code(), Code::kNoSpace);
  EXPECT_NE(pending.status().message().find("/ssd/0"), std::string::npos);
}

TEST_F(TierTest, InjectedErrorsLeaveNoCommittedFile) {
  for (int n = 1; n <= 8; ++n) {
    fault_->FailAt(n, n % 2 ? Code::kIo : Code::kNoSpace, /*once=*/true);
    int before = fault_->operations();
    Status s = tier_->PutFile("heat", 100 + n, "a", "payload");
    fault_->ClearFaults();
    if (fault_->operations() - before < n) break;  // fewer operations than n: no fault hit
    EXPECT_FALSE(s.ok()) << n;
    auto got = tier_->GetFile("heat", 100 + n, "a");
    EXPECT_FALSE(got.ok()) << "a failed write must not leave a committed file (op " << n << ")";
  }
}

// Regression (issue 9): an all-digit directory name too long for int made
// `cairn list` abort in std::stoi; such names are no node and no version.
TEST(TierPathTest, DirectoryNamesParseOnlyWhatTheTierMakes) {
  EXPECT_EQ(ParseNodeDirName("0"), 0);
  EXPECT_EQ(ParseNodeDirName("17"), 17);
  EXPECT_EQ(ParseNodeDirName("2147483647"), 2147483647);
  EXPECT_EQ(ParseNodeDirName("2147483648"), std::nullopt);
  EXPECT_EQ(ParseNodeDirName("99999999999999999999999"), std::nullopt);
  EXPECT_EQ(ParseNodeDirName("007"), std::nullopt);
  EXPECT_EQ(ParseNodeDirName(""), std::nullopt);
  EXPECT_EQ(ParseNodeDirName("-1"), std::nullopt);
  EXPECT_EQ(ParseNodeDirName("1a"), std::nullopt);
  EXPECT_EQ(Tier::ParseVersionDirName("v0000000042"), 42);
  EXPECT_EQ(Tier::ParseVersionDirName("v2147483647"), kMaxVersion);
  EXPECT_EQ(Tier::ParseVersionDirName("v9999999999"), std::nullopt);
  EXPECT_EQ(Tier::ParseVersionDirName("v42"), std::nullopt);
  EXPECT_EQ(Tier::ParseVersionDirName("v00000000-1"), std::nullopt);
  EXPECT_EQ(Tier::ParseVersionDirName("x0000000042"), std::nullopt);
}

TEST_F(TierTest, OutOfRangeVersionDirectoryIsSkipped) {
  ASSERT_TRUE(tier_->PutFile("heat", 3, "a", "x").ok());
  ASSERT_TRUE(mem_->CreateDirs("/ssd/0/heat/v9999999999").ok());
  EXPECT_EQ(*tier_->Versions("heat"), (std::vector<int64_t>{3}));
}

}  // namespace
}  // namespace cairn

namespace cairn {
namespace {

TEST(SlotTest, RetiredPartFileIsReusedThroughItsMapping) {
  auto env = NewMemEnv();
  TierConfig config;
  Tier tier(env.get(), TierKind::kMemory, "/shm/0", config);
  tier.EnableSlots("r000001.", 1);
  const uint64_t size = 3 << 20;
  std::string a(size, 'a'), b(size, 'b');
  for (int v = 1; v <= 3; ++v) {
    auto pending = tier.Create("heat", v, "r000001.part", size);
    ASSERT_TRUE(pending.ok()) << pending.status().ToString();
    const std::string& data = v % 2 ? a : b;
    ASSERT_TRUE((*pending)->file().Append(data.data(), size).ok());
    ASSERT_TRUE((*pending)->Commit().ok());
    EXPECT_EQ(*tier.GetFile("heat", v, "r000001.part"), data);
    if (v > 1) {
      ASSERT_TRUE(tier.Retire("heat", v - 1, "r000001.part").ok());
    }
    auto parked = env->ListDir("/shm/0/.free");
    EXPECT_EQ(parked.ok() ? parked->size() : 0u, v > 1 ? 1u : 0u) << "after version " << v;
  }
  // Another rank's file and small files are deleted, not parked.
  ASSERT_TRUE(tier.PutFile("heat", 3, "r000002.part", std::string(size, 'c')).ok());
  ASSERT_TRUE(tier.Retire("heat", 3, "r000002.part").ok());
  ASSERT_TRUE(tier.PutFile("heat", 3, "r000001.manifest", "m").ok());
  ASSERT_TRUE(tier.Retire("heat", 3, "r000001.manifest").ok());
  EXPECT_EQ(env->ListDir("/shm/0/.free")->size(), 1u);
  EXPECT_EQ(*tier.Files("heat", 3), std::vector<std::string>{"r000001.part"});
}

TEST(SlotTest, AbandonedWriteBecomesASlot) {
  auto env = NewMemEnv();
  Tier tier(env.get(), TierKind::kMemory, "/shm/0", TierConfig{});
  tier.EnableSlots("r000000.", 1);
  {
    auto pending = tier.Create("heat", 1, "r000000.part", 2 << 20);
    ASSERT_TRUE(pending.ok());
  }
  EXPECT_TRUE(tier.Files("heat", 1)->empty());
  EXPECT_EQ(env->ListDir("/shm/0/.free")->size(), 1u);
}

}  // namespace
}  // namespace cairn

namespace cairn {
namespace {

// Slot files of `owner` parked in the tier's .free directory.
size_t Parked(Env* env, const std::string& free_dir) {
  auto entries = env->ListDir(free_dir);
  return entries.ok() ? entries->size() : 0;
}

// Writes `file` of version v of "heat", `size` bytes of 'a' + v, into
// the tier and checks that it reads back.
void WriteVersionFile(Tier& tier, int v, const std::string& file, uint64_t size) {
  std::string data(size, static_cast<char>('a' + v));
  auto pending = tier.Create("heat", v, file, size);
  ASSERT_TRUE(pending.ok()) << pending.status().ToString();
  ASSERT_TRUE((*pending)->file().Append(data.data(), size).ok());
  ASSERT_TRUE((*pending)->Commit().ok());
  EXPECT_EQ(*tier.GetFile("heat", v, file), data) << file << " version " << v;
}

TEST(SlotReservationTest, SlotsAreMadeAheadAndTheFirstPartTakesOne) {
  auto env = NewMemEnv();
  Tier tier(env.get(), TierKind::kMemory, "/shm/0", TierConfig{});
  tier.EnableSlots("r000000.", 2);
  const uint64_t size = 2 << 20;
  tier.ReserveSlots({size}, 3);
  tier.WaitForSlots();
  EXPECT_EQ(Parked(env.get(), tier.FreeSlotDir()), 3u);
  EXPECT_EQ(*tier.UsedBytes(), 3 * size);  // parked slots count against the capacity
  EXPECT_EQ(*tier.VersionBytes(), 0u);
  std::string data(size, 'd');
  auto pending = tier.Create("heat", 1, "r000000.part", size);
  ASSERT_TRUE(pending.ok()) << pending.status().ToString();
  ASSERT_TRUE((*pending)->file().Append(data.data(), size).ok());
  ASSERT_TRUE((*pending)->Commit().ok());
  EXPECT_EQ(Parked(env.get(), tier.FreeSlotDir()), 2u);
  EXPECT_EQ(*tier.GetFile("heat", 1, "r000000.part"), data);
  EXPECT_EQ(*tier.UsedBytes(), 3 * size);  // written into a slot: no new room taken
}

TEST(SlotReservationTest, PausedReservationMakesNothingUntilResumed) {
  auto env = NewMemEnv();
  Tier tier(env.get(), TierKind::kMemory, "/shm/0", TierConfig{});
  tier.EnableSlots("r000000.", 2);
  const uint64_t size = 2 << 20;
  {
    Tier::SlotHold pause(&tier, Tier::SlotWork::kAll);
    tier.ReserveSlots({size}, 2);
    // A part written meanwhile does not wait for the held slots: it is a
    // fresh file, and no slot is made while the pause lasts.
    std::string data(size, 'p');
    auto pending = tier.Create("heat", 1, "r000000.part", size);
    ASSERT_TRUE(pending.ok()) << pending.status().ToString();
    ASSERT_TRUE((*pending)->file().Append(data.data(), size).ok());
    ASSERT_TRUE((*pending)->Commit().ok());
    EXPECT_EQ(*tier.GetFile("heat", 1, "r000000.part"), data);
    EXPECT_EQ(Parked(env.get(), tier.FreeSlotDir()), 0u);
  }
  tier.WaitForSlots();
  EXPECT_EQ(Parked(env.get(), tier.FreeSlotDir()), 1u);  // the part holds the other
}

TEST(SlotReservationTest, RetiredFilesBeyondTheSpareSlotsAreDeletedInTheBackground) {
  auto env = NewMemEnv();
  Tier tier(env.get(), TierKind::kMemory, "/shm/0", TierConfig{});
  tier.EnableSlots("r000000.", 1);
  const uint64_t size = 2 << 20;
  // A version an earlier process left: not mapped by this one.
  const std::string old_part = tier.FilePath("heat", 1, "r000000.part");
  ASSERT_TRUE(env->CreateDirs(tier.VersionDir("heat", 1)).ok());
  const std::string data(size, 'o');
  ASSERT_TRUE(env->WriteFileAtomic(old_part, data.data(), size, false).ok());
  tier.ReserveSlots({size}, 2);
  tier.WaitForSlots();
  EXPECT_EQ(Parked(env.get(), tier.FreeSlotDir()), 2u);
  // Retired beyond max_free: parked at once, deleted by the reservation's
  // thread, which keeps the slots it made.
  ASSERT_TRUE(tier.Retire("heat", 1, "r000000.part").ok());
  EXPECT_FALSE(env->FileExists(old_part));
  tier.WaitForSlots();
  EXPECT_EQ(Parked(env.get(), tier.FreeSlotDir()), 2u);
  EXPECT_EQ(*tier.UsedBytes(), 2 * size);
}

// Records which thread deleted each file.
class DeleteRecordingEnv final : public EnvWrapper {
 public:
  explicit DeleteRecordingEnv(Env* target) : EnvWrapper(target) {}
  Status DeleteFile(const std::string& path) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      deleted_by_[path] = std::this_thread::get_id();
    }
    return EnvWrapper::DeleteFile(path);
  }
  std::map<std::string, std::thread::id> deleted_by() {
    std::lock_guard<std::mutex> lock(mu_);
    return deleted_by_;
  }

 private:
  std::mutex mu_;
  std::map<std::string, std::thread::id> deleted_by_;
};

// Two versions an earlier run left on an ssd tier (unmapped slots), both
// retired by one checkpoint: the one beyond the spare slot is parked and
// deleted by the background thread, not by the call (0.4-0.56 s per
// 256 MiB file on ext4 here).
TEST(SlotTest, RetiredFilesBeyondTheSpareSlotsOfAnUnmappedTierAreDeletedInTheBackground) {
  auto mem = NewMemEnv();
  DeleteRecordingEnv env(mem.get());
  const uint64_t size = 2 << 20;
  {
    Tier tier(&env, TierKind::kSsd, "/ssd/0", TierConfig{});
    tier.EnableSlots("r000000.", 1);
    const std::string data(size, 'o');
    for (int v : {6, 7}) {
      ASSERT_TRUE(env.CreateDirs(tier.VersionDir("heat", v)).ok());
      ASSERT_TRUE(
          env.WriteFileAtomic(tier.FilePath("heat", v, "r000000.part"), data.data(), size, false)
              .ok());
    }
    ASSERT_TRUE(tier.Retire("heat", 7, "r000000.part").ok());
    ASSERT_TRUE(tier.Retire("heat", 6, "r000000.part").ok());
    EXPECT_FALSE(env.FileExists(tier.FilePath("heat", 6, "r000000.part")));
    EXPECT_FALSE(env.FileExists(tier.FilePath("heat", 7, "r000000.part")));
    tier.WaitForSlots();
    EXPECT_EQ(Parked(&env, tier.FreeSlotDir()), 1u);
    EXPECT_EQ(*tier.UsedBytes(), size);
    std::vector<std::thread::id> slot_deleters;
    for (const auto& [path, thread] : env.deleted_by()) {
      if (path.rfind(tier.FreeSlotDir() + "/", 0) == 0) slot_deleters.push_back(thread);
    }
    ASSERT_EQ(slot_deleters.size(), 1u);
    EXPECT_NE(slot_deleters[0], std::this_thread::get_id());
    // The spare slot is what the next part is written into.
    WriteVersionFile(tier, 8, "r000000.part", size);
    EXPECT_EQ(Parked(&env, tier.FreeSlotDir()), 0u);
  }
}

// While a checkpoint holds deletions, surplus slots stay parked; they are
// deleted once the hold ends.
TEST(SlotTest, HeldDeletionsWaitForTheHoldToEnd) {
  auto env = NewMemEnv();
  Tier tier(env.get(), TierKind::kSsd, "/ssd/0", TierConfig{});
  tier.EnableSlots("r000000.", 1);
  const uint64_t size = 2 << 20;
  for (int v = 1; v <= 3; ++v) WriteVersionFile(tier, v, "r000000.part", size);
  {
    Tier::SlotHold hold(&tier, Tier::SlotWork::kDeletions);
    for (int v = 1; v <= 3; ++v) ASSERT_TRUE(tier.Retire("heat", v, "r000000.part").ok());
    tier.WaitForSlots();
    EXPECT_EQ(Parked(env.get(), tier.FreeSlotDir()), 3u);
  }
  tier.WaitForSlots();
  EXPECT_EQ(Parked(env.get(), tier.FreeSlotDir()), 1u);
}

// A tier closed right after a retire deletes the surplus before it goes:
// no more than max_free slot files outlive the process.
TEST(SlotTest, SurplusSlotsAreDeletedWhenTheTierCloses) {
  auto env = NewMemEnv();
  const uint64_t size = 2 << 20;
  std::string free_dir;
  {
    Tier tier(env.get(), TierKind::kSsd, "/ssd/0", TierConfig{});
    tier.EnableSlots("r000000.", 1);
    free_dir = tier.FreeSlotDir();
    for (int v = 1; v <= 4; ++v) WriteVersionFile(tier, v, "r000000.part", size);
    for (int v = 1; v <= 4; ++v) ASSERT_TRUE(tier.Retire("heat", v, "r000000.part").ok());
  }
  EXPECT_EQ(Parked(env.get(), free_dir), 1u);
}

// A part of kSize bytes being written into a mapped slot of a memory tier.
class MappedSlotTest : public ::testing::Test {
 protected:
  static constexpr uint64_t kSize = 2 << 20;  // worth a slot
  void SetUp() override {
    tier_.EnableSlots("r000000.", 1);
    auto pending = tier_.Create("heat", 1, "r000000.part", kSize);
    ASSERT_TRUE(pending.ok()) << pending.status().ToString();
    pending_ = std::move(*pending);
  }
  WritableFile& file() { return pending_->file(); }
  // Commits the part; its bytes.
  std::string Committed() {
    EXPECT_TRUE(pending_->Commit().ok());
    return *tier_.GetFile("heat", 1, "r000000.part");
  }

  std::unique_ptr<Env> env_ = NewMemEnv();
  Tier tier_{env_.get(), TierKind::kMemory, "/shm/0", TierConfig{}};
  std::unique_ptr<PendingFile> pending_;
};

TEST_F(MappedSlotTest, ClaimedBytesReachTheFile) {
  ASSERT_TRUE(file().Append("head", 4).ok());
  uint8_t* claimed = file().Claim(kSize - 8);
  ASSERT_NE(claimed, nullptr);
  std::memset(claimed, 'c', kSize - 8);
  // Past the reserved size: nothing is claimed, and Append names the error.
  EXPECT_EQ(file().Claim(5), nullptr);
  EXPECT_FALSE(file().Append("tail!", 5).ok());
  ASSERT_TRUE(file().Append("tail", 4).ok());
  EXPECT_EQ(Committed(), "head" + std::string(kSize - 8, 'c') + "tail");
}

// Bytes filled through Peek are the file's only once claimed; until then
// the next write overwrites them.
TEST_F(MappedSlotTest, PeekedBytesAreKeptOnlyByAClaim) {
  uint8_t* peeked = file().Peek(4);
  ASSERT_NE(peeked, nullptr);
  std::memcpy(peeked, "drop", 4);
  ASSERT_TRUE(file().Append("head", 4).ok());  // overwrites what was peeked
  peeked = file().Peek(kSize - 8);
  ASSERT_NE(peeked, nullptr);
  std::memset(peeked, 'k', kSize - 8);
  EXPECT_EQ(file().Claim(kSize - 8), peeked);
  EXPECT_EQ(file().Peek(5), nullptr);  // past the reserved size
  ASSERT_TRUE(file().Append("tail", 4).ok());
  EXPECT_EQ(Committed(), "head" + std::string(kSize - 8, 'k') + "tail");
}

TEST(SlotReservationTest, PartsAndSidecarsEachTakeASlotOfTheirSize) {
  // A part and its ECC sidecar reserved side by side: each file takes a
  // slot of its own size, never resizes the other kind's, and retired
  // files are parked for the next version, so no version grows the tier.
  auto env = NewMemEnv();
  Tier tier(env.get(), TierKind::kMemory, "/shm/0", TierConfig{});
  tier.EnableSlots("r000000.", 4);
  const uint64_t part = 16 << 20;
  const uint64_t sidecar = (part / 8) + 4096;  // both worth a slot (>= 1 MiB)
  tier.ReserveSlots({part, sidecar}, 2);
  tier.WaitForSlots();
  EXPECT_EQ(Parked(env.get(), tier.FreeSlotDir()), 4u);
  const uint64_t used = *tier.UsedBytes();
  EXPECT_EQ(used, 2 * (part + sidecar));
  for (int v = 1; v <= 4; ++v) {
    // The sidecar first, as a checkpoint creates it before the part.
    for (auto [file, size] : {std::pair<const char*, uint64_t>{"r000000.part.ecc", sidecar},
                              {"r000000.part", part}}) {
      ASSERT_NO_FATAL_FAILURE(WriteVersionFile(tier, v, file, size));
    }
    EXPECT_EQ(*tier.UsedBytes(), used) << "version " << v;
    if (v >= 2) {
      ASSERT_TRUE(tier.Retire("heat", v - 1, "r000000.part").ok());
      ASSERT_TRUE(tier.Retire("heat", v - 1, "r000000.part.ecc").ok());
    }
  }
}

TEST(SlotReservationTest, FilesOfUnreservedSizesLiveInTheReservedSlots) {
  // A deduplicated pages file is sized by its plan, never the size the
  // slots were reserved at: it takes a slot that holds it, whose file is
  // resized, instead of a fresh file beside the slots. On tmpfs through
  // real mappings: a byte written past a shrunk file's end is a SIGBUS.
  char pattern[] = "/dev/shm/cairn-slot-test-XXXXXX";
  ASSERT_NE(::mkdtemp(pattern), nullptr);
  const std::string root = pattern;
  {
    Tier tier(PosixEnv(), TierKind::kMemory, root + "/0", TierConfig{});
    tier.EnableSlots("r000000.", 2);
    const uint64_t full = 8 << 20;
    tier.ReserveSlots({full}, 2);
    tier.WaitForSlots();
    ASSERT_EQ(*tier.UsedBytes(), 2 * full);
    const uint64_t sizes[] = {3 << 20, (5 << 20) + 123, full, (2 << 20) + 7, full, 3 << 20};
    int v = 0;
    for (uint64_t size : sizes) {
      ++v;
      ASSERT_NO_FATAL_FAILURE(WriteVersionFile(tier, v, "r000000.part", size));
      EXPECT_LE(*tier.UsedBytes(), 2 * full) << "version " << v << " made a file beside the slots";
      if (v >= 2) {
        ASSERT_TRUE(tier.Retire("heat", v - 1, "r000000.part").ok());
      }
    }
  }
  (void)PosixEnv()->DeleteRecursive(root);
}

TEST(SlotReservationTest, AFileTakesTheParkedSlotNearestItsLength) {
  // Slots mapped at one size whose files were cut to different lengths:
  // a short file takes the slot of a short one and a long file the slot
  // of a long one, so that neither cuts nor grows a file by much (freeing
  // or faulting in its pages).
  char pattern[] = "/dev/shm/cairn-slot-test-XXXXXX";
  ASSERT_NE(::mkdtemp(pattern), nullptr);
  const std::string root = pattern;
  {
    Tier tier(PosixEnv(), TierKind::kMemory, root + "/0", TierConfig{});
    tier.EnableSlots("r000000.", 4);
    const uint64_t full = 8 << 20;
    const uint64_t short_file = 1 << 20;
    tier.ReserveSlots({full}, 2);
    tier.WaitForSlots();
    ASSERT_NO_FATAL_FAILURE(WriteVersionFile(tier, 1, "r000000.part", short_file));
    ASSERT_NO_FATAL_FAILURE(WriteVersionFile(tier, 2, "r000000.part", full));
    ASSERT_TRUE(tier.Retire("heat", 1, "r000000.part").ok());
    ASSERT_TRUE(tier.Retire("heat", 2, "r000000.part").ok());
    auto parked_lengths = [&] {
      std::multiset<uint64_t> lengths;
      auto entries = PosixEnv()->ListDir(tier.FreeSlotDir());
      EXPECT_TRUE(entries.ok()) << entries.status().ToString();
      for (const auto& e : entries.ok() ? *entries : std::vector<DirEntry>{}) {
        auto length = PosixEnv()->FileSize(JoinPath(tier.FreeSlotDir(), e.name));
        EXPECT_TRUE(length.ok()) << length.status().ToString();
        lengths.insert(length.ok() ? *length : 0);
      }
      return lengths;
    };
    ASSERT_EQ(parked_lengths(), (std::multiset<uint64_t>{short_file, full}));
    ASSERT_NO_FATAL_FAILURE(WriteVersionFile(tier, 3, "r000000.part", short_file + 100));
    EXPECT_EQ(parked_lengths(), (std::multiset<uint64_t>{full}));
    ASSERT_TRUE(tier.Retire("heat", 3, "r000000.part").ok());
    ASSERT_NO_FATAL_FAILURE(WriteVersionFile(tier, 4, "r000000.part", full));
    EXPECT_EQ(parked_lengths(), (std::multiset<uint64_t>{short_file + 100}));
  }
  (void)PosixEnv()->DeleteRecursive(root);
}

TEST(SlotReservationTest, PartCreatedWhileReservingIsWhole) {
  // The checkpoint may come before the reservation is done: it waits for a
  // slot of its size or makes its own file, never one half made.
  auto env = NewMemEnv();
  Tier tier(env.get(), TierKind::kMemory, "/shm/0", TierConfig{});
  tier.EnableSlots("r000000.", 2);
  const uint64_t size = 3 << 20;
  tier.ReserveSlots({size}, 4);
  for (int v = 1; v <= 3; ++v) {
    ASSERT_NO_FATAL_FAILURE(WriteVersionFile(tier, v, "r000000.part", size));
    EXPECT_EQ(*tier.Files("heat", v), std::vector<std::string>{"r000000.part"});
  }
  tier.WaitForSlots();
  // Three hold versions, one is parked: the request of four is met.
  EXPECT_EQ(Parked(env.get(), tier.FreeSlotDir()), 1u);
}

TEST(SlotReservationTest, ReservationStopsAtTheCapacity) {
  auto env = NewMemEnv();
  TierConfig config;
  config.capacity = 5 << 20;
  Tier tier(env.get(), TierKind::kMemory, "/shm/0", config);
  tier.EnableSlots("r000000.", 2);
  tier.ReserveSlots({2 << 20}, 3);
  tier.WaitForSlots();
  EXPECT_EQ(Parked(env.get(), tier.FreeSlotDir()), 2u);
  EXPECT_LE(*tier.UsedBytes(), config.capacity);
}

TEST(SlotReservationTest, ParkedSlotsYieldRoomToOtherFiles) {
  auto env = NewMemEnv();
  TierConfig config;
  config.capacity = 5 << 20;
  Tier tier(env.get(), TierKind::kMemory, "/shm/0", config);
  tier.EnableSlots("r000000.", 2);
  tier.ReserveSlots({2 << 20}, 2);
  tier.WaitForSlots();
  ASSERT_EQ(Parked(env.get(), tier.FreeSlotDir()), 2u);
  // Another rank's 3 MiB part fits only once this rank's slots are gone.
  ASSERT_TRUE(tier.PutFile("heat", 1, "r000001.part", std::string(3 << 20, 'x')).ok());
  EXPECT_EQ(Parked(env.get(), tier.FreeSlotDir()), 0u);
  EXPECT_EQ(tier.PutFile("heat", 1, "r000001.f.big", std::string(3 << 20, 'y')).code(),
            Code::kNoSpace);
}

TEST(SlotReservationTest, ReleaseDeletesParkedSlotsAndEmptyDirectories) {
  auto env = NewMemEnv();
  TierConfig config;
  config.path = "/shm/cairn-{user}/{node}";
  Tier tier(env.get(), TierKind::kMemory, "/shm/cairn-me/0", config);
  ASSERT_TRUE(env->CreateDirs("/shm/cairn-me/0/.route/r000000").ok());
  tier.EnableSlots("r000000.", 2);
  tier.ReserveSlots({1 << 20}, 2);
  EXPECT_EQ(tier.ReleaseParkedSlots() % (1 << 20), 0u);
  EXPECT_EQ(Parked(env.get(), tier.FreeSlotDir()), 0u);
  ASSERT_TRUE(tier.PutFile("heat", 1, "r000000.manifest", "m").ok());
  ASSERT_TRUE(tier.Remove("heat", 1, "r000000.manifest").ok());
  ASSERT_TRUE(tier.RemoveVersionDirIfEmpty("heat", 1).ok());
  tier.RemoveEmptyDirectories();
  // Everything below the literal "/shm" of the path went; /shm stays.
  EXPECT_FALSE(env->FileExists("/shm/cairn-me"));
  EXPECT_TRUE(env->FileExists("/shm"));
}

}  // namespace
}  // namespace cairn
