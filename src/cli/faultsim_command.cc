#include "cli/faultsim_command.h"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "base/clock.h"
#include "cli/output.h"
#include "codec/dram_faultsim.h"
#include "env/env.h"

namespace cairn {

namespace {

struct FaultsimFlags {
  uint64_t trials = 1'000'000;
  uint64_t seed = 1;
  int threads = 0;
  std::string scope = "access";
  std::string model = "cairn";
  bool scope_given = false;  // --scope on the command line
  std::vector<std::string> codes;
  std::vector<std::string> faults;
  bool json = false;
};

// A rate as a percentage that keeps rare events visible: four decimals like
// the paper, scientific notation below 0.0001 %, and as many decimals as it
// takes (up to 8) not to round a rate short of 100 % up to "100.0000".
// Exactly 0 and exactly 100 % print as "0" and "100".
std::string Percent(uint64_t count, uint64_t trials) {
  if (count == 0) return "0";
  if (count == trials) return "100";
  const double pct = 100.0 * static_cast<double>(count) / static_cast<double>(trials);
  if (pct < 0.0001) return fmt::format("{:.1e}", pct);
  for (int decimals = 4; decimals < 8; ++decimals) {
    std::string s = fmt::format("{:.{}f}", pct, decimals);
    if (s.rfind("100.", 0) != 0) return s;
  }
  return fmt::format("{:.8f}", pct);
}

void PrintTable(const std::vector<FaultSimCell>& cells, const std::vector<EccScheme>& schemes,
                const FaultSimOptions& options, int threads, double seconds) {
  constexpr int kFaultsWidth = 13;
  constexpr int kRateWidth = 9;
  std::string out = fmt::format(
      "cairn faultsim: {} trials per cell, seed {}, model {}, scope {}, {} thread{}\n"
      "rates in % of faulty accesses: DCE corrected, DUE detected uncorrectable, "
      "SDC silent corruption\n\n",
      options.trials, options.seed, FaultModelName(options.model),
      options.model == FaultModel::kPaper ? "paper (faults meet in one codeword)"
                                          : FaultScopeName(options.scope),
      threads, threads == 1 ? "" : "s");
  std::string line1 = fmt::format("{:<{}}", "faults", kFaultsWidth);
  std::string line2 = fmt::format("{:<{}}", "", kFaultsWidth);
  for (EccScheme s : schemes) {
    line1 += fmt::format(" | {:<{}}", EccSchemeName(s), 3 * kRateWidth + 2);
    line2 += fmt::format(" | {:>{}} {:>{}} {:>{}}", "DCE", kRateWidth, "DUE", kRateWidth, "SDC",
                         kRateWidth);
  }
  out += line1 + "\n" + line2 + "\n";
  bool in_pairs = false;
  for (size_t row = 0; row < cells.size(); row += schemes.size()) {
    const FaultCombo& combo = cells[row].combo;
    if (combo.second.has_value() != in_pairs || row == 0) {
      in_pairs = combo.second.has_value();
      out += in_pairs ? "-- two chips\n" : "-- one chip\n";
    }
    std::string line = fmt::format("{:<{}}", FaultComboName(combo), kFaultsWidth);
    for (size_t c = row; c < row + schemes.size(); ++c) {
      line += fmt::format(" | {:>{}} {:>{}} {:>{}}", Percent(cells[c].dce, cells[c].trials),
                          kRateWidth, Percent(cells[c].due, cells[c].trials), kRateWidth,
                          Percent(cells[c].sdc, cells[c].trials), kRateWidth);
    }
    out += line + "\n";
  }
  const double total = static_cast<double>(options.trials) * static_cast<double>(cells.size());
  out += fmt::format("\n{:.0f} trials in {:.2f} s ({:.1f} M trials/s)\n", total, seconds,
                     total / seconds / 1e6);
  std::fputs(out.c_str(), stdout);
}

void PrintJson(const std::vector<FaultSimCell>& cells) {
  for (const FaultSimCell& c : cells) {
    PrintJsonLine({{"code", EccSchemeName(c.scheme)}, {"faults", FaultComboName(c.combo)},
                   {"model", FaultModelName(c.model)}, {"scope", FaultScopeName(c.scope)},
                   {"trials", c.trials},
                   {"dce", c.dce_rate()}, {"due", c.due_rate()}, {"sdc", c.sdc_rate()}});
  }
}

int RunFaultsim(const FaultsimFlags& flags) {
  if (flags.trials == 0) {
    fmt::print(stderr, "cairn faultsim: --trials must be at least 1\n");
    return 2;
  }
  if (flags.threads < 0) {
    fmt::print(stderr, "cairn faultsim: --threads must be 0 (all cores) or more, got {}\n",
               flags.threads);
    return 2;
  }
  FaultSimOptions options;
  options.trials = flags.trials;
  options.seed = flags.seed;
  options.threads = flags.threads;
  auto scope = ParseFaultScope(flags.scope);
  if (!scope.ok()) {
    fmt::print(stderr, "cairn faultsim: --scope: {}\n", scope.status().ToString());
    return 2;
  }
  options.scope = *scope;
  auto model = ParseFaultModel(flags.model);
  if (!model.ok()) {
    fmt::print(stderr, "cairn faultsim: --model: {}\n", model.status().ToString());
    return 2;
  }
  options.model = *model;
  if (options.model == FaultModel::kPaper && flags.scope_given) {
    fmt::print(stderr,
               "cairn faultsim: --scope applies to --model cairn; the paper model places the "
               "faults itself (docs/ecc.md)\n");
    return 2;
  }
  for (const std::string& name : flags.codes) {
    auto scheme = ParseEccScheme(name);
    if (!scheme.ok()) {
      fmt::print(stderr, "cairn faultsim: --codes: {}\n", scheme.status().ToString());
      return 2;
    }
    options.schemes.push_back(*scheme);
  }
  for (const std::string& name : flags.faults) {
    auto combo = ParseFaultCombo(name);
    if (!combo.ok()) {
      fmt::print(stderr, "cairn faultsim: --faults: {}\n", combo.status().ToString());
      return 2;
    }
    options.combos.push_back(*combo);
  }
  const int threads = options.threads > 0
                          ? options.threads
                          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  options.threads = threads;

  DramFaultSimulator sim;
  Clock* clock = Clock::Real();
  const double start = clock->MonotonicSeconds();
  auto cells = sim.Run(options, PosixEnv());
  const double seconds = clock->MonotonicSeconds() - start;
  if (!cells.ok()) {
    fmt::print(stderr, "cairn faultsim: {}\n", cells.status().ToString());
    return 1;
  }
  const std::vector<EccScheme> schemes =
      options.schemes.empty() ? AllEccSchemes() : options.schemes;
  if (flags.json) {
    PrintJson(*cells);
    fmt::print(stderr, "cairn faultsim: {} cells x {} trials in {:.2f} s on {} thread{}\n",
               cells->size(), options.trials, seconds, threads, threads == 1 ? "" : "s");
  } else {
    PrintTable(*cells, schemes, options, threads, seconds);
  }
  std::fflush(stdout);
  return 0;
}

}  // namespace

void AddFaultsimCommand(CLI::App& app, int& exit_code) {
  // The flags must live as long as app (CLI11 writes into them while
  // parsing); the callback, stored in the subcommand, owns them.
  auto flags = std::make_shared<FaultsimFlags>();
  CLI::App* cmd = app.add_subcommand(
      "faultsim",
      "Monte-Carlo DRAM fault injection: DCE/DUE/SDC rates of RS(36,32), RS(18,16), "
      "RS(19,16) and x4 Chipkill (paper Table 4)");
  cmd->add_option("--trials", flags->trials, "trials per cell (code x fault combination)")
      ->capture_default_str();
  cmd->add_option("--seed", flags->seed, "random seed; the output depends on nothing else")
      ->capture_default_str();
  cmd->add_option("--threads", flags->threads, "worker threads (0: hardware concurrency)")
      ->capture_default_str();
  cmd->add_option("--scope", flags->scope,
                  "access: faults anywhere in the 8-beat burst, outcome of the whole access; "
                  "codeword: faults confined to one codeword, outcome of that codeword")
      ->capture_default_str()
      ->check(CLI::IsMember({"access", "codeword"}))
      ->each([flags](const std::string&) { flags->scope_given = true; });
  cmd->add_option("--model", flags->model,
                  "cairn: Cairn's fault model and decoders; paper: the assumptions under which "
                  "Table 4's RS(36,32) double-fault SDC figures arise (pins flip every bit, "
                  "chips every symbol, faults meet in one codeword, locators unchecked, SDC "
                  "counted per codeword; docs/ecc.md)")
      ->capture_default_str()
      ->check(CLI::IsMember({"cairn", "paper"}));
  cmd->add_option("--codes", flags->codes,
                  "comma-separated subset of rs36_32,rs18_16,rs19_16,chipkill_x4 (default all)")
      ->delimiter(',');
  cmd->add_option("--faults", flags->faults,
                  "comma-separated fault combinations: bit, column, pin, word, chip, or two "
                  "joined by '+' such as pin+chip (default: all 5 single and 15 pairs)")
      ->delimiter(',');
  cmd->add_flag("--json", flags->json, "one JSON object per line and cell");
  cmd->callback([flags, &exit_code]() { exit_code = RunFaultsim(*flags); });
}

}  // namespace cairn
