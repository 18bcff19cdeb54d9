#include "runtime/io_parallelism.h"

#include <gtest/gtest.h>

#include "model/energy_optimizer.h"
#include "model/stated_profile.h"

namespace cairn {
namespace {

IoProfile SlidesProfile() {
  auto profile = BuildStatedProfile(SlidesNode(), {StatedSsd(), StatedIoDrive()});
  EXPECT_TRUE(profile.ok()) << profile.status().ToString();
  return *profile;
}

TEST(IoParallelismTest, FixedComesFromTheConfig) {
  Config config;
  config.io.parallelism = 3;
  IoParallelism p = ResolveIoParallelism(config, NewMemEnv().get(), TierKind::kSsd, 1e9);
  EXPECT_EQ(p.write, 3);
  EXPECT_EQ(p.read, 3);
  EXPECT_EQ(p.source, "config");
}

TEST(IoParallelismTest, AutoWithoutAProfileFallsBackToAllRanks) {
  Config config;
  config.dir = "/job";
  config.io.auto_parallelism = true;
  auto env = NewMemEnv();
  IoParallelism p = ResolveIoParallelism(config, env.get(), TierKind::kSsd, 1e9);
  EXPECT_EQ(p.write, 0);
  EXPECT_EQ(p.source, "default");
}

TEST(IoParallelismTest, AutoTakesTheFastestParallelismOfTheTiersDevice) {
  IoProfile profile = SlidesProfile();
  IntervalSettings model;  // no power_compute: the throughput optimum
  auto p = ProfileParallelism(profile, "iodrive", model, 64e9);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->source, "profile (throughput)");
  // Brute force over the grid at the highest frequency.
  const DeviceIoProfile* d = profile.FindDevice("iodrive");
  size_t f = profile.frequencies_khz.size() - 1;
  for (IoOp op : {IoOp::kWrite, IoOp::kRead}) {
    double best = 0;
    int best_p = 0;
    for (size_t i = 0; i < d->parallelism.size(); ++i) {
      for (const auto& b : d->blocks) {
        if (b.op(op).throughput_bps[f][i] > best) {
          best = b.op(op).throughput_bps[f][i];
          best_p = d->parallelism[i];
        }
      }
    }
    EXPECT_EQ(op == IoOp::kWrite ? p->write : p->read, best_p) << IoOpName(op);
  }
  EXPECT_EQ(ProfileParallelism(profile, "tape", model, 64e9).status().code(), Code::kNotFound);
}

TEST(IoParallelismTest, AutoWithPowerTakesTheEnergyOptimum) {
  IoProfile profile = SlidesProfile();
  IntervalSettings model;
  model.power_compute = 471.1;
  model.mtbf_seconds = 1 / 1.89e-5;
  auto p = ProfileParallelism(profile, "ssd", model, 64e9);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->source, "profile (energy)");
  auto report = OptimizeDeviceEnergy(profile, *profile.FindDevice("ssd"),
                                     EnergyProblem{64e9, 1.89e-5, 471.1});
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(p->write, report->best.write.parallelism);
  EXPECT_EQ(p->read, report->best.read.parallelism);
}

TEST(IoParallelismTest, AutoReadsTheProfileFile) {
  Config config;
  config.dir = "/job";
  config.io.auto_parallelism = true;
  auto env = NewMemEnv();
  ASSERT_TRUE(env->CreateDirs("/job").ok());
  std::string json = SerializeIoProfile(SlidesProfile());
  ASSERT_TRUE(env->WriteFileAtomic("/job/cairn-profile.json", json.data(), json.size(), false).ok());
  IoParallelism p = ResolveIoParallelism(config, env.get(), TierKind::kSsd, 64e9);
  EXPECT_EQ(p.source, "profile (throughput)");
  EXPECT_GE(p.write, 1);
  EXPECT_GE(p.read, 1);
}

TEST(ParallelismTunerTest, TriesAllThenHalvingAndKeepsTheFastest) {
  ParallelismTuner tuner(8);
  EXPECT_EQ(tuner.candidates(), (std::vector<int>{0, 4, 2, 1}));
  const double times[] = {4.0, 2.5, 3.0, 3.5};
  for (double t : times) {
    ASSERT_FALSE(tuner.done());
    tuner.Record(t);
  }
  EXPECT_TRUE(tuner.done());
  EXPECT_EQ(tuner.best(), 4);
  EXPECT_EQ(tuner.current(), 4);
  tuner.Record(0.1);  // after the trials, records change nothing
  EXPECT_EQ(tuner.best(), 4);
}

TEST(ParallelismTunerTest, OneRankHasOnlyAllAtOnce) {
  ParallelismTuner tuner(1);
  EXPECT_EQ(tuner.candidates(), (std::vector<int>{0}));
  EXPECT_EQ(tuner.current(), 0);
  tuner.Record(1.0);
  EXPECT_TRUE(tuner.done());
  EXPECT_EQ(tuner.best(), 0);
}

TEST(ParallelismTunerTest, TiesKeepTheEarlierCandidate) {
  ParallelismTuner tuner(2);
  EXPECT_EQ(tuner.current(), 0);
  tuner.Record(1.0);
  EXPECT_EQ(tuner.current(), 1);
  tuner.Record(1.0);
  EXPECT_EQ(tuner.best(), 0);
}

}  // namespace
}  // namespace cairn
