// MpiProcess: MPI as a process-wide session, for programs that start MPI
// themselves (the `cairn` command under mpirun) rather than receive a
// communicator from the application (cairn_init). This header does not
// bring in <mpi.h>: its users see only Comm.
// Thread-safety: Start and the destructor run on the main thread, once per
// process (MPI cannot be initialized twice); comm() as Comm.
#ifndef CAIRN_COMM_MPI_PROCESS_H_
#define CAIRN_COMM_MPI_PROCESS_H_

#include <memory>

#include "base/status.h"
#include "comm/comm.h"

namespace cairn {

// Whether MPI_Init has been called in this process (and MPI_Finalize not).
bool MpiIsInitialized();

class MpiProcess {
 public:
  // Initializes MPI with MPI_THREAD_FUNNELED unless the caller already did
  // (then MPI is used as it is and left initialized), and gives a Comm over
  // MPI_COMM_WORLD, nodes being the ranks that share memory. kComm when MPI
  // fails to initialize, lacks FUNNELED support or cannot build the
  // communicator; MPI is finalized again if Start initialized it.
  // Collective over MPI_COMM_WORLD.
  static Result<std::unique_ptr<MpiProcess>> Start();
  // Frees the communicator, then finalizes MPI if Start initialized it.
  // Collective.
  ~MpiProcess();
  MpiProcess(const MpiProcess&) = delete;
  MpiProcess& operator=(const MpiProcess&) = delete;

  Comm& comm() { return *comm_; }

 private:
  MpiProcess(std::unique_ptr<Comm> comm, bool finalize)
      : comm_(std::move(comm)), finalize_(finalize) {}

  std::unique_ptr<Comm> comm_;
  bool finalize_;  // Start called MPI_Init_thread
};

}  // namespace cairn

#endif  // CAIRN_COMM_MPI_PROCESS_H_
