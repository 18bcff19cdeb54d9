#include "cli/faultsim_command.h"

#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

namespace cairn {
namespace {

struct CommandRun {
  int exit_code = -1;
  std::string out;
};

// Parses `args` as `cairn <args>` with only the faultsim command added.
CommandRun RunCommand(std::vector<std::string> args) {
  CLI::App app("cairn");
  CommandRun run;
  AddFaultsimCommand(app, run.exit_code);
  args.insert(args.begin(), "cairn");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  testing::internal::CaptureStdout();
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    run.exit_code = app.exit(e);
  }
  run.out = testing::internal::GetCapturedStdout();
  return run;
}

std::vector<std::string> Lines(const std::string& s) {
  std::vector<std::string> lines;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(FaultsimCommandTest, JsonOneObjectPerCell) {
  CommandRun r = RunCommand({"faultsim", "--trials", "3000", "--seed", "5", "--threads", "2",
                             "--codes", "rs19_16,chipkill_x4", "--faults", "chip,chip+pin",
                             "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 4u) << r.out;
  EXPECT_EQ(lines[0],
            "{\"code\":\"rs19_16\",\"faults\":\"chip\",\"model\":\"cairn\",\"scope\":\"access\","
            "\"trials\":3000,"
            "\"dce\":1.0,\"due\":0.0,\"sdc\":0.0}");
  EXPECT_NE(lines[2].find("\"faults\":\"pin+chip\""), std::string::npos) << lines[2];
  EXPECT_NE(lines[3].find("\"code\":\"chipkill_x4\""), std::string::npos) << lines[3];
}

TEST(FaultsimCommandTest, SameSeedSameOutputOnAnyThreadCount) {
  std::vector<std::string> args = {"faultsim", "--trials", "70000", "--seed", "9",
                                   "--faults", "pin+pin,chip+chip", "--json"};
  auto one = args, two = args;
  one.insert(one.end(), {"--threads", "1"});
  two.insert(two.end(), {"--threads", "2"});
  CommandRun a = RunCommand(one), b = RunCommand(two);
  ASSERT_EQ(a.exit_code, 0);
  ASSERT_EQ(b.exit_code, 0);
  EXPECT_EQ(a.out, b.out);
  EXPECT_EQ(Lines(a.out).size(), 8u);
}

TEST(FaultsimCommandTest, TableListsEveryCombination) {
  CommandRun r = RunCommand({"faultsim", "--trials", "200", "--scope", "codeword"});
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("scope codeword"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("chipkill_x4"), std::string::npos);
  for (const char* row : {"bit ", "column ", "pin ", "word ", "chip ", "bit+bit ", "pin+chip ",
                          "chip+chip "}) {
    EXPECT_NE(r.out.find(std::string("\n") + row), std::string::npos) << row << "\n" << r.out;
  }
}

TEST(FaultsimCommandTest, PaperModelReportsItselfAndRefusesAScope) {
  CommandRun r = RunCommand({"faultsim", "--trials", "2000", "--model", "paper", "--codes",
                             "rs36_32", "--faults", "pin,bit+bit", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  // Under the paper's assumptions a pin is 8 wrong bits, two symbols per
  // codeword: detected; two bits always meet in one codeword: detected.
  EXPECT_EQ(lines[0],
            "{\"code\":\"rs36_32\",\"faults\":\"pin\",\"model\":\"paper\",\"scope\":\"access\","
            "\"trials\":2000,\"dce\":0.0,\"due\":1.0,\"sdc\":0.0}");
  EXPECT_NE(lines[1].find("\"faults\":\"bit+bit\",\"model\":\"paper\""), std::string::npos);
  EXPECT_NE(lines[1].find("\"due\":1.0"), std::string::npos) << lines[1];
  EXPECT_EQ(RunCommand({"faultsim", "--model", "paper", "--scope", "codeword"}).exit_code, 2);
  EXPECT_NE(RunCommand({"faultsim", "--model", "hardware"}).exit_code, 0);
  CommandRun table = RunCommand({"faultsim", "--trials", "100", "--model", "paper"});
  ASSERT_EQ(table.exit_code, 0);
  EXPECT_NE(table.out.find("model paper"), std::string::npos) << table.out;
}

TEST(FaultsimCommandTest, BadValuesSetTheExitCode) {
  EXPECT_EQ(RunCommand({"faultsim", "--faults", "rank"}).exit_code, 2);
  EXPECT_EQ(RunCommand({"faultsim", "--codes", "secded"}).exit_code, 2);
  EXPECT_NE(RunCommand({"faultsim", "--scope", "rank"}).exit_code, 0);
  EXPECT_EQ(RunCommand({"faultsim", "--trials", "0"}).exit_code, 2);
  EXPECT_EQ(RunCommand({"faultsim", "--threads", "-1"}).exit_code, 2);
}

}  // namespace
}  // namespace cairn
