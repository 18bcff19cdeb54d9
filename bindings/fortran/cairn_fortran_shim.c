/*
 * The C half of the Fortran module `cairn` (cairn.f90): the two calls that
 * Fortran cannot make through ISO_C_BINDING alone.
 *  - cairn_fortran_init turns a Fortran MPI communicator handle (the integer
 *    of `use mpi`, or MPI_VAL of an mpi_f08 type(MPI_Comm)) into an MPI_Comm.
 *  - cairn_fortran_protect reads the descriptor of an assumed-rank array
 *    (Fortran 2018, ISO_Fortran_binding.h): address, extents, element length.
 *    The Fortran side has already rejected non-contiguous arrays.
 */
#include <ISO_Fortran_binding.h>
#include <mpi.h>
#include <stddef.h>

#include "cairn/cairn.h"

/* Not in cairn.h: only the Fortran module calls these. */
int cairn_fortran_init(MPI_Fint comm, const char *config_path);
int cairn_fortran_protect(int id, const CFI_cdesc_t *array);

int cairn_fortran_init(MPI_Fint comm, const char *config_path) {
  return cairn_init(MPI_Comm_f2c(comm), config_path);
}

int cairn_fortran_protect(int id, const CFI_cdesc_t *array) {
  size_t count = 1;
  for (CFI_rank_t d = 0; d < array->rank; ++d) count *= (size_t)array->dim[d].extent;
  return cairn_protect(id, array->base_addr, count, array->elem_len);
}
