! cairn.f90 — the Fortran module of Cairn, multi-level checkpoint/restart for
! MPI applications, over its C API (include/cairn/cairn.h) with ISO_C_BINDING.
!
!   use mpi_f08          ! or: use mpi
!   use cairn
!   call cairn_init(MPI_COMM_WORLD, "", ierr)      ! "": $CAIRN_CONFIG or defaults
!   call cairn_protect(0, grid, ierr)               ! any rank, contiguous
!   call cairn_checkpoint("heat", step, ierr)      ! collective
!
! Every routine ends with `ierr`: CAIRN_SUCCESS (0) or a negative CAIRN_E_*
! code; cairn_error_message(CAIRN_LAST_ERROR) is then the cause as a Fortran
! string. No routine stops the program. Calls marked collective must be made
! by every rank, in the same order. cairn.h states the full rules; the
! routines here follow it one to one.
!
! Protected arrays are registered in place, without a copy: pass the variable
! itself (declared with TARGET, or ALLOCATABLE and not reallocated), not an
! expression or a temporary, and keep it alive until cairn_unprotect or
! cairn_finalize. A non-contiguous array section is rejected (one run of bytes
! is registered). The error state of this module is per process: call it from
! one thread.
module cairn
  use, intrinsic :: iso_c_binding, only: c_char, c_double, c_double_complex, c_float, &
      c_float_complex, c_int, c_int32_t, c_int64_t, c_null_char, c_ptr, c_size_t, &
      c_associated, c_f_pointer
  use mpi_f08, only: MPI_Comm
  implicit none
  private

  ! Status codes (cairn.h; values are pinned).
  integer, parameter, public :: CAIRN_SUCCESS = 0
  integer, parameter, public :: CAIRN_E_INVALID_ARGUMENT = -1
  integer, parameter, public :: CAIRN_E_NOT_INITIALIZED = -2
  integer, parameter, public :: CAIRN_E_ALREADY_INITIALIZED = -3
  integer, parameter, public :: CAIRN_E_CONFIG = -4
  integer, parameter, public :: CAIRN_E_IO = -5
  integer, parameter, public :: CAIRN_E_NO_SPACE = -6
  integer, parameter, public :: CAIRN_E_CORRUPT = -7
  integer, parameter, public :: CAIRN_E_NOT_FOUND = -8
  integer, parameter, public :: CAIRN_E_MISMATCH = -9
  integer, parameter, public :: CAIRN_E_COMM = -10
  integer, parameter, public :: CAIRN_E_INTERNAL = -11
  integer, parameter, public :: CAIRN_E_UNSUPPORTED = -12
  !> Not a status: the code that asks cairn_error_message for the last error.
  integer, parameter, public :: CAIRN_LAST_ERROR = -huge(0) - 1

  public :: cairn_init, cairn_init_single, cairn_protect, cairn_unprotect, cairn_checkpoint, &
      cairn_checkpoint_wait, cairn_restart_test, cairn_restart, cairn_delete, cairn_delete_version, cairn_finalize, &
      cairn_error_message

  !> cairn_init(comm, config, ierr). Collective over comm: an mpi_f08
  !> type(MPI_Comm) or the integer handle of `use mpi`. config: path of a TOML
  !> file, "" for $CAIRN_CONFIG or the built-in defaults.
  interface cairn_init
    module procedure init_f08, init_handle
  end interface cairn_init

  !> cairn_protect(id, array, ierr): registers array (a scalar or an array of
  !> any rank) as region id >= 0, in place.
  interface cairn_protect
    module procedure protect_real32, protect_real64, protect_int32, protect_int64, &
        protect_complex32, protect_complex64, protect_logical
  end interface cairn_protect

  ! The C API, under c_ names so that the Fortran names above stay free.
  interface
    integer(c_int) function c_fortran_init(comm, config) bind(C, name="cairn_fortran_init")
      import :: c_int, c_char
      integer(c_int), value :: comm
      character(kind=c_char), intent(in) :: config(*)
    end function
    integer(c_int) function c_fortran_protect(id, array) bind(C, name="cairn_fortran_protect")
      import :: c_int
      integer(c_int), value :: id
      type(*), dimension(..), intent(in) :: array
    end function
    integer(c_int) function c_init_single(config) bind(C, name="cairn_init_single")
      import :: c_int, c_char
      character(kind=c_char), intent(in) :: config(*)
    end function
    integer(c_int) function c_unprotect(id) bind(C, name="cairn_unprotect")
      import :: c_int
      integer(c_int), value :: id
    end function
    integer(c_int) function c_checkpoint(name, version) bind(C, name="cairn_checkpoint")
      import :: c_int, c_char
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int), value :: version
    end function
    integer(c_int) function c_checkpoint_wait() bind(C, name="cairn_checkpoint_wait")
      import :: c_int
    end function
    integer(c_int) function c_restart_test(name, max_version) bind(C, name="cairn_restart_test")
      import :: c_int, c_char
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int), value :: max_version
    end function
    integer(c_int) function c_restart(name, version) bind(C, name="cairn_restart")
      import :: c_int, c_char
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int), value :: version
    end function
    integer(c_int) function c_delete(name) bind(C, name="cairn_delete")
      import :: c_int, c_char
      character(kind=c_char), intent(in) :: name(*)
    end function
    integer(c_int) function c_delete_version(name, version) bind(C, name="cairn_delete_version")
      import :: c_int, c_char
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int), value :: version
    end function
    integer(c_int) function c_finalize() bind(C, name="cairn_finalize")
      import :: c_int
    end function
    integer(c_int) function c_last_error() bind(C, name="cairn_last_error")
      import :: c_int
    end function
    type(c_ptr) function c_error_message(code) bind(C, name="cairn_error_message")
      import :: c_int, c_ptr
      integer(c_int), value :: code
    end function
    integer(c_size_t) function c_strlen(text) bind(C, name="strlen")
      import :: c_size_t, c_ptr
      type(c_ptr), value :: text
    end function
  end interface

  ! The message of a failure this module found itself (a non-contiguous
  ! array), which the C library never saw; cleared by every other call.
  character(len=:), allocatable, save :: module_error

contains

  !> A Fortran string as a C string: trailing blanks dropped, NUL appended.
  pure function c_string(text) result(c_text)
    character(len=*), intent(in) :: text
    character(kind=c_char, len=:), allocatable :: c_text
    c_text = trim(text) // c_null_char
  end function

  !> Every routine ends here: ierr is the C call's status, and the C library's
  !> message (not an older one of this module) describes it.
  subroutine finish(rc, ierr)
    integer(c_int), intent(in) :: rc
    integer, intent(out) :: ierr
    if (allocated(module_error)) deallocate(module_error)
    ierr = min(int(rc), CAIRN_SUCCESS)
  end subroutine

  subroutine init_f08(comm, config, ierr)
    type(MPI_Comm), intent(in) :: comm
    character(len=*), intent(in) :: config
    integer, intent(out) :: ierr
    call finish(c_fortran_init(int(comm%MPI_VAL, c_int), c_string(config)), ierr)
  end subroutine

  subroutine init_handle(comm, config, ierr)
    integer, intent(in) :: comm
    character(len=*), intent(in) :: config
    integer, intent(out) :: ierr
    call finish(c_fortran_init(int(comm, c_int), c_string(config)), ierr)
  end subroutine

  !> As cairn_init, for a program that does not use MPI (one rank).
  subroutine cairn_init_single(config, ierr)
    character(len=*), intent(in) :: config
    integer, intent(out) :: ierr
    call finish(c_init_single(c_string(config)), ierr)
  end subroutine

  !> The common check of the cairn_protect specifics: a non-contiguous array
  !> (a strided section) cannot be registered as one run of bytes. False (and
  !> ierr, and the message) when the array is rejected.
  logical function accepted(id, contiguous, ierr)
    integer, intent(in) :: id
    logical, intent(in) :: contiguous
    integer, intent(out) :: ierr
    character(len=16) :: id_text
    accepted = contiguous
    if (contiguous) return
    ierr = CAIRN_E_INVALID_ARGUMENT
    write (id_text, '(i0)') id
    module_error = "cairn_protect: region " // trim(id_text) // ": the array is not " // &
        "contiguous (a strided section); protect a contiguous array that holds the state"
  end function

  subroutine protect_real32(id, array, ierr)
    integer, intent(in) :: id
    real(c_float), dimension(..), intent(in), target :: array
    integer, intent(out) :: ierr
    if (accepted(id, is_contiguous(array), ierr)) &
        call finish(c_fortran_protect(int(id, c_int), array), ierr)
  end subroutine

  subroutine protect_real64(id, array, ierr)
    integer, intent(in) :: id
    real(c_double), dimension(..), intent(in), target :: array
    integer, intent(out) :: ierr
    if (accepted(id, is_contiguous(array), ierr)) &
        call finish(c_fortran_protect(int(id, c_int), array), ierr)
  end subroutine

  subroutine protect_int32(id, array, ierr)
    integer, intent(in) :: id
    integer(c_int32_t), dimension(..), intent(in), target :: array
    integer, intent(out) :: ierr
    if (accepted(id, is_contiguous(array), ierr)) &
        call finish(c_fortran_protect(int(id, c_int), array), ierr)
  end subroutine

  subroutine protect_int64(id, array, ierr)
    integer, intent(in) :: id
    integer(c_int64_t), dimension(..), intent(in), target :: array
    integer, intent(out) :: ierr
    if (accepted(id, is_contiguous(array), ierr)) &
        call finish(c_fortran_protect(int(id, c_int), array), ierr)
  end subroutine

  subroutine protect_complex32(id, array, ierr)
    integer, intent(in) :: id
    complex(c_float_complex), dimension(..), intent(in), target :: array
    integer, intent(out) :: ierr
    if (accepted(id, is_contiguous(array), ierr)) &
        call finish(c_fortran_protect(int(id, c_int), array), ierr)
  end subroutine

  subroutine protect_complex64(id, array, ierr)
    integer, intent(in) :: id
    complex(c_double_complex), dimension(..), intent(in), target :: array
    integer, intent(out) :: ierr
    if (accepted(id, is_contiguous(array), ierr)) &
        call finish(c_fortran_protect(int(id, c_int), array), ierr)
  end subroutine

  subroutine protect_logical(id, array, ierr)
    integer, intent(in) :: id
    logical, dimension(..), intent(in), target :: array
    integer, intent(out) :: ierr
    if (accepted(id, is_contiguous(array), ierr)) &
        call finish(c_fortran_protect(int(id, c_int), array), ierr)
  end subroutine

  !> Forgets region id (CAIRN_E_NOT_FOUND if it was not protected).
  subroutine cairn_unprotect(id, ierr)
    integer, intent(in) :: id
    integer, intent(out) :: ierr
    call finish(c_unprotect(int(id, c_int)), ierr)
  end subroutine

  !> Collective. Saves every protected array as version `version` of `name`.
  subroutine cairn_checkpoint(name, version, ierr)
    character(len=*), intent(in) :: name
    integer, intent(in) :: version
    integer, intent(out) :: ierr
    call finish(c_checkpoint(c_string(name), int(version, c_int)), ierr)
  end subroutine

  !> Blocks until background work (drains to lower tiers) is done.
  subroutine cairn_checkpoint_wait(ierr)
    integer, intent(out) :: ierr
    call finish(c_checkpoint_wait(), ierr)
  end subroutine

  !> Collective. version: the newest version <= max_version (< 0: any) of
  !> `name` that every rank can recover, or -1 when there is none (ierr then
  !> says whether that is an error).
  subroutine cairn_restart_test(name, max_version, version, ierr)
    character(len=*), intent(in) :: name
    integer, intent(in) :: max_version
    integer, intent(out) :: version, ierr
    version = int(c_restart_test(c_string(name), int(max_version, c_int)))
    call finish(c_last_error(), ierr)
  end subroutine

  !> Collective. Fills every protected array from version `version` of `name`
  !> (or an older one when that cannot be recovered); restored: the version
  !> actually restored.
  subroutine cairn_restart(name, version, restored, ierr)
    character(len=*), intent(in) :: name
    integer, intent(in) :: version
    integer, intent(out) :: restored, ierr
    integer(c_int) :: rc
    rc = c_restart(c_string(name), int(version, c_int))
    restored = int(rc)
    call finish(rc, ierr)
  end subroutine

  !> Collective. Removes every version of checkpoint `name` from every tier.
  subroutine cairn_delete(name, ierr)
    character(len=*), intent(in) :: name
    integer, intent(out) :: ierr
    call finish(c_delete(c_string(name)), ierr)
  end subroutine

  !> Collective. Removes one version of checkpoint `name` from every tier.
  subroutine cairn_delete_version(name, version, ierr)
    character(len=*), intent(in) :: name
    integer, intent(in) :: version
    integer, intent(out) :: ierr
    call finish(c_delete_version(c_string(name), int(version, c_int)), ierr)
  end subroutine

  !> Collective. Waits for background work and releases Cairn.
  subroutine cairn_finalize(ierr)
    integer, intent(out) :: ierr
    call finish(c_finalize(), ierr)
  end subroutine

  !> The text for a status code; for CAIRN_LAST_ERROR (or the last error's
  !> code) the cause of the last failed call, naming file, key or rank.
  function cairn_error_message(code) result(message)
    integer, intent(in) :: code
    character(len=:), allocatable :: message
    type(c_ptr) :: text
    character(kind=c_char), pointer :: chars(:)
    integer :: i, n
    if (allocated(module_error) .and. &
        (code == CAIRN_LAST_ERROR .or. code == CAIRN_E_INVALID_ARGUMENT)) then
      message = module_error
      return
    end if
    text = c_error_message(int(code, c_int))
    n = 0
    if (c_associated(text)) n = int(c_strlen(text))
    allocate(character(len=n) :: message)
    if (n == 0) return
    call c_f_pointer(text, chars, [n])
    do i = 1, n
      message(i:i) = chars(i)
    end do
  end function
end module cairn
