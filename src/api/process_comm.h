// How a command-line tool (the `cairn` command) takes part in an MPI job:
// whether mpirun or srun started this process, read from the environment
// they set, and a Comm over MPI_COMM_WORLD when they did. MPI is initialized
// only then, so that `cairn` launched plainly never calls MPI (and works
// where no MPI runtime is set up); the library's own entry points take an
// MPI_Comm from the application instead (cairn_init).
// Thread-safety: DetectMpiLaunch is pure; a ProcessComm is opened, used and
// closed on the main thread, once per process (MPI cannot be initialized
// twice).
#ifndef CAIRN_API_PROCESS_COMM_H_
#define CAIRN_API_PROCESS_COMM_H_

#include <memory>

#include "base/config.h"
#include "base/status.h"
#include "comm/comm.h"
#include "comm/mpi_process.h"

namespace cairn {

struct MpiLaunch {
  // The environment of an MPI launcher is present: OMPI_COMM_WORLD_SIZE
  // (Open MPI), PMIX_RANK (PMIx: Open MPI, srun --mpi=pmix), PMI_RANK or
  // PMI_SIZE (MPICH/Hydra, Intel MPI, srun --mpi=pmi2), MPI_LOCALNRANKS
  // (Hydra).
  bool under_mpirun = false;
  // Processes of the job from OMPI_COMM_WORLD_SIZE or PMI_SIZE; 0 when the
  // launcher did not say (PMIx alone) or said something unreadable.
  int size = 0;
};
MpiLaunch DetectMpiLaunch(const EnvLookup& lookup);

// Owns the MPI session of a tool. Open gives a Comm over MPI_COMM_WORLD,
// nodes being the ranks that share memory, when the launch has more than
// one process (or an unknown number); otherwise a single-process Comm and
// no MPI at all.
class ProcessComm {
 public:
  // kComm when MPI fails to initialize or to build the communicator (MPI is
  // finalized again if Open initialized it). Collective over MPI_COMM_WORLD
  // when MPI is used; MPI already initialized by the caller is used as it is
  // and left initialized (comm/mpi_process.h).
  static Result<std::unique_ptr<ProcessComm>> Open(const EnvLookup& lookup);
  // Frees the communicator, then finalizes MPI if Open initialized it.
  // Collective when MPI is used.
  ~ProcessComm() = default;
  ProcessComm(const ProcessComm&) = delete;
  ProcessComm& operator=(const ProcessComm&) = delete;

  Comm& comm() { return mpi_ ? mpi_->comm() : *single_; }

 private:
  explicit ProcessComm(std::unique_ptr<Comm> single) : single_(std::move(single)) {}
  explicit ProcessComm(std::unique_ptr<MpiProcess> mpi) : mpi_(std::move(mpi)) {}

  std::unique_ptr<Comm> single_;    // without MPI
  std::unique_ptr<MpiProcess> mpi_;  // under an MPI launcher
};

}  // namespace cairn

#endif  // CAIRN_API_PROCESS_COMM_H_
