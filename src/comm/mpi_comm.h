// The MPI implementation of Comm. Including this header brings in <mpi.h>;
// only comm/ and the C API's init include it.
// Thread-safety: as Comm.
#ifndef CAIRN_COMM_MPI_COMM_H_
#define CAIRN_COMM_MPI_COMM_H_

#include <mpi.h>

#include "comm/comm.h"

namespace cairn {

// Duplicates `comm` (errors return codes instead of aborting). Nodes are
// the sets of ranks that share memory, or, when ranks_per_node > 0, runs of
// ranks_per_node consecutive ranks (virtual nodes, for tests on one host).
// Collective over comm.
Result<std::unique_ptr<Comm>> NewMpiComm(MPI_Comm comm, int ranks_per_node);

// The MPI communicator under comm (owned by comm), or MPI_COMM_NULL when
// comm is not an MPI Comm: for comm/'s other MPI users (rma_window.cc,
// request_channel.cc).
MPI_Comm MpiHandle(const Comm& comm);

}  // namespace cairn

#endif  // CAIRN_COMM_MPI_COMM_H_
