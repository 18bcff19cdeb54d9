#include "api/process_comm.h"

#include <map>
#include <optional>
#include <string>

#include <gtest/gtest.h>

namespace cairn {
namespace {

EnvLookup Vars(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(ProcessCommTest, DetectsEachLaunchersEnvironment) {
  EXPECT_FALSE(DetectMpiLaunch(Vars({})).under_mpirun);
  // What a shell inside a Slurm allocation has before srun starts anything.
  EXPECT_FALSE(DetectMpiLaunch(Vars({{"SLURM_NTASKS", "4"}, {"SLURM_JOB_ID", "7"}})).under_mpirun);
  EXPECT_FALSE(DetectMpiLaunch(Vars({{"PMIX_RANK", ""}})).under_mpirun);

  MpiLaunch ompi = DetectMpiLaunch(
      Vars({{"OMPI_COMM_WORLD_SIZE", "4"}, {"OMPI_COMM_WORLD_RANK", "1"}, {"PMIX_RANK", "1"}}));
  EXPECT_TRUE(ompi.under_mpirun);
  EXPECT_EQ(ompi.size, 4);
  MpiLaunch hydra = DetectMpiLaunch(Vars({{"PMI_RANK", "0"}, {"PMI_SIZE", "2"}}));
  EXPECT_TRUE(hydra.under_mpirun);
  EXPECT_EQ(hydra.size, 2);
  // PMIx alone does not say how many: the size is MPI's to tell.
  MpiLaunch pmix = DetectMpiLaunch(Vars({{"PMIX_RANK", "3"}}));
  EXPECT_TRUE(pmix.under_mpirun);
  EXPECT_EQ(pmix.size, 0);
  EXPECT_EQ(DetectMpiLaunch(Vars({{"PMI_SIZE", "two"}})).size, 0);
  EXPECT_EQ(DetectMpiLaunch(Vars({{"PMI_SIZE", "-2"}})).size, 0);
  EXPECT_TRUE(DetectMpiLaunch(Vars({{"MPI_LOCALNRANKS", "2"}})).under_mpirun);
}

TEST(ProcessCommTest, WithoutALauncherOrWithOneProcessMpiIsNeverStarted) {
  for (const auto& vars : {std::map<std::string, std::string>{},
                           std::map<std::string, std::string>{{"OMPI_COMM_WORLD_SIZE", "1"}}}) {
    auto process = ProcessComm::Open(Vars(vars));
    ASSERT_TRUE(process.ok()) << process.status().ToString();
    EXPECT_EQ((*process)->comm().size(), 1);
    EXPECT_EQ((*process)->comm().rank(), 0);
    EXPECT_FALSE(MpiIsInitialized());
  }
}

}  // namespace
}  // namespace cairn
