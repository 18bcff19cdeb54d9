// MPI return codes as Status: the one translation that every MPI caller in
// comm/ uses, so an MPI failure reads the same wherever it happens.
#ifndef CAIRN_COMM_MPI_ERROR_H_
#define CAIRN_COMM_MPI_ERROR_H_

#include <mpi.h>

#include "base/status.h"

namespace cairn {

// A kComm error naming the call (`what`) and MPI's text for rc.
Status MpiError(int rc, const char* what);

}  // namespace cairn

// Returns MpiError from the enclosing function when call fails.
#define CAIRN_MPI(call, what)                             \
  do {                                                    \
    int cairn_mpi_rc_ = (call);                           \
    if (cairn_mpi_rc_ != MPI_SUCCESS) {                   \
      return ::cairn::MpiError(cairn_mpi_rc_, what);      \
    }                                                     \
  } while (0)

#endif  // CAIRN_COMM_MPI_ERROR_H_
