// `cairn faultsim`: the command line of the Monte-Carlo DRAM fault simulator
// (codec/dram_faultsim.h). It injects bit/column/pin/word/chip faults into
// one chip, and every pair of them into two chips, of a DDR3 x4 rank and
// prints, for each ECC scheme, the fraction of faulty accesses that are
// corrected (DCE), detected but uncorrectable (DUE) or silently corrupted
// (SDC): the paper's Table 4, recomputed. docs/results.md shows a run.
//
//   cairn faultsim [--trials N] [--seed S] [--threads T] [--scope access|codeword]
//                  [--model cairn|paper] [--codes rs36_32,rs18_16,rs19_16,chipkill_x4]
//                  [--faults bit,pin+chip,...] [--json]
//
// Output goes to stdout: a table, or with --json one object per line and
// cell, {"code","faults","model","scope","trials","dce","due","sdc"},
// rates as fractions of trials. --model paper (codec/dram_faultsim.h) takes
// no --scope. Timing goes to stderr in --json mode.
// Thread-safety: call once while building the App, before parsing.
#ifndef CAIRN_CLI_FAULTSIM_COMMAND_H_
#define CAIRN_CLI_FAULTSIM_COMMAND_H_

namespace CLI {
class App;
}  // namespace CLI

namespace cairn {

// Adds the `faultsim` subcommand to app. When it runs, its callback sets
// exit_code: 0 on success, 2 for a bad option value (named on stderr), 1 if
// the simulation fails. exit_code must outlive app's parsing.
void AddFaultsimCommand(CLI::App& app, int& exit_code);

}  // namespace cairn

#endif  // CAIRN_CLI_FAULTSIM_COMMAND_H_
