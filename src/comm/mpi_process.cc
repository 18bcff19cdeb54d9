#include "comm/mpi_process.h"

#include "comm/mpi_comm.h"

namespace cairn {

bool MpiIsInitialized() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  int finalized = 0;
  MPI_Finalized(&finalized);
  return initialized != 0 && finalized == 0;
}

Result<std::unique_ptr<MpiProcess>> MpiProcess::Start() {
  bool finalize = false;
  if (!MpiIsInitialized()) {
    int provided = MPI_THREAD_SINGLE;
    int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    if (rc != MPI_SUCCESS) return Error(Code::kComm, "MPI_Init_thread failed (MPI error {})", rc);
    finalize = true;
    // Callers may run threads that do I/O while the main thread alone calls
    // MPI; MPI_THREAD_SINGLE would not allow those threads to exist.
    if (provided < MPI_THREAD_FUNNELED) {
      MPI_Finalize();
      return Error(Code::kComm, "MPI does not support MPI_THREAD_FUNNELED");
    }
  }
  auto comm = NewMpiComm(MPI_COMM_WORLD, /*ranks_per_node=*/0);
  if (!comm.ok()) {
    if (finalize) MPI_Finalize();
    return comm.status();
  }
  return std::unique_ptr<MpiProcess>(new MpiProcess(std::move(comm).value(), finalize));
}

MpiProcess::~MpiProcess() {
  comm_.reset();  // MPI_Comm_free must come before MPI_Finalize
  if (finalize_) MPI_Finalize();
}

}  // namespace cairn
