#include "comm/mpi_error.h"

#include <string>

namespace cairn {

Status MpiError(int rc, const char* what) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  return Error(Code::kComm, "{}: {}", what, std::string(text, static_cast<size_t>(len)));
}

}  // namespace cairn
