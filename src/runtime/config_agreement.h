// AgreeOnConfig: the ranks of a job check that they run with the same
// configuration, where it matters. Each rank reads its own file and
// CAIRN_* variables, and a key one rank sets differently (a per-rank
// wrapper script's variable, a file edited while the job started) would
// otherwise make ranks take different collective steps and wait for each
// other forever, or keep different versions.
#ifndef CAIRN_RUNTIME_CONFIG_AGREEMENT_H_
#define CAIRN_RUNTIME_CONFIG_AGREEMENT_H_

#include "base/config.h"
#include "base/status.h"
#include "comm/comm.h"

namespace cairn {

// Collective: kConfig naming each key (but the per-rank ones,
// ConfigKey::per_rank) whose value is not the same on every rank, with
// this rank's value, on every rank; Ok when they all agree.
Status AgreeOnConfig(Comm& comm, const Config& config);

}  // namespace cairn

#endif  // CAIRN_RUNTIME_CONFIG_AGREEMENT_H_
