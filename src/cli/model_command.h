// `cairn model`: the energy-aware checkpoint I/O optimizer on the command
// line (model/energy_optimizer.h). From an I/O profile — measured, or built
// from a device's stated figures — the checkpoint size per node, the failure
// rate and the application's power, it prints the CPU frequency, number of
// I/O processes and block size that minimize the energy per unit of
// effective time (EPE) for checkpoint writes and restart reads, in the form
// of the "summary of
// experiment" of Saito et al.; then, per device, the EPE of the fixed
// alternatives (cpufreq "performance" and "powersave", with 1 and with the
// most I/O processes) and the checkpoint interval next to Young's and Daly's.
// docs/results.md shows a run; docs/model.md the formulas.
//
//   cairn model [--profile FILE.json | --device ssd|iodrive ...]
//               [--checkpoint-size 64GB] [--lambda 1.89e-5 | --mtbf 14h]
//               [--app-power 471.1] [--save-profile FILE.json] [--json]
//               [--plot FILE.png]
//
// Without options it reproduces the slides' setting. With --json, stdout gets
// one JSON object per device and line (docs/model.md lists the fields).
// --plot draws EPE against the checkpoint interval and against I/O
// parallelism (cli/plot.h).
// Thread-safety: call once while building the App, before parsing.
#ifndef CAIRN_CLI_MODEL_COMMAND_H_
#define CAIRN_CLI_MODEL_COMMAND_H_

namespace CLI {
class App;
}  // namespace CLI

namespace cairn {

// Adds the `model` subcommand to app. When it runs, its callback sets
// exit_code: 0 on success, 2 for a bad option value (named on stderr), 1 when
// the profile cannot be read, the model cannot be evaluated or the plot cannot
// be drawn. exit_code must outlive app's parsing.
void AddModelCommand(CLI::App& app, int& exit_code);

}  // namespace cairn

#endif  // CAIRN_CLI_MODEL_COMMAND_H_
