// `cairn profile`: measures this node's I/O profile (runtime/io_profiler.h) —
// write and read throughput of every enabled tier against I/O parallelism and
// block size (one grid per block size), reads after evicting the page cache,
// at every CPU frequency the OS lets it set, with the power from RAPL or from
// a user's power table — and writes it as JSON that `cairn model --profile
// FILE` reads. docs/model.md "Measuring a profile".
//
// Launched plainly, parallelism is threads of this process. Under `mpirun
// -np N` (api/process_comm.h initializes MPI then), parallelism is the
// processes of rank 0's node, and only rank 0 prints and writes the profile.
//
//   cairn profile [--config FILE] [--out cairn-profile.json] [--max-parallelism P]
//                 [--bytes 32MiB] [--block-sizes 64KiB,1MiB,4MiB]
//                 [--power-table FILE.json] [--json]
//
// A progress bar goes to stderr when stderr is a terminal.
// Thread-safety: call once while building the App, before parsing.
#ifndef CAIRN_CLI_PROFILE_COMMAND_H_
#define CAIRN_CLI_PROFILE_COMMAND_H_

namespace CLI {
class App;
}  // namespace CLI

namespace cairn {

// Adds the `profile` subcommand to app. Its callback sets exit_code: 0 on
// success, 2 for a bad option value, 1 when measuring or writing fails (no
// power source, unwritable tier, MPI failing to start, ...), on every rank
// alike except when rank 0 alone cannot write the profile. exit_code must
// outlive app's parsing.
void AddProfileCommand(CLI::App& app, int& exit_code);

}  // namespace cairn

#endif  // CAIRN_CLI_PROFILE_COMMAND_H_
