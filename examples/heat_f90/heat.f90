! heat.f90 — the 2D heat equation of examples/heat (without its hot squares),
! in Fortran 2008 with mpi_f08 and Cairn's Fortran module.
!
! An explicit 5-point stencil on an R x C grid, split across the ranks in
! blocks of columns (Fortran arrays are column-major, so a rank's block is
! contiguous); neighbours swap one halo column each way every step. The top
! edge (row 1) is held at 100 degrees, the rest of the border at 0. The state
! protected with Cairn is the rank's block of columns (region 0) and the step
! counter (region 1); every K steps the job checkpoints as version = step, and
! at start it restores the newest version every rank can recover. Every cell
! is updated with the same floating-point operations whatever the rank count,
! so the final grid is bit-for-bit the same with or without kills and restarts.
!
!   mpirun -np 4 heat_f90 --steps N --every K --rows R --cols C [--config F] [--out F]
!
! Rank 0 prints "heat: resumed from version V (step S)" after a restart,
! "step S checkpointed" after every checkpoint (flushed at once) and
! "heat: done, ..." at the end; with --out it writes the final grid as R*C
! raw real(8) values, column-major (Fortran order), native byte order.
program heat_f90
  use, intrinsic :: iso_fortran_env, only: output_unit, error_unit, real64, int32
  use mpi_f08
  use cairn
  implicit none

  real(real64), parameter :: alpha = 0.2_real64  ! stable below 0.25
  real(real64), parameter :: top_edge = 100.0_real64
  integer, parameter :: region_grid = 0, region_step = 1

  integer :: steps, every, rows, cols, rank, nranks, ierr
  character(len=4096) :: config, out
  integer :: col0, nloc, left, right, latest, restored
  integer(int32), target :: step
  real(real64), allocatable, target :: u(:, :)
  real(real64), allocatable :: next(:, :)

  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks)
  call parse_options()

  call block_of_columns(cols, rank, nranks, col0, nloc)
  left = merge(rank - 1, MPI_PROC_NULL, rank > 0)
  right = merge(rank + 1, MPI_PROC_NULL, rank < nranks - 1)
  ! Local columns 1..nloc are owned; 0 and nloc+1 are halos.
  allocate(u(rows, 0:nloc + 1), source=0.0_real64)
  u(1, :) = top_edge
  next = u  ! fixed boundary cells are never rewritten
  step = 0

  call cairn_init(MPI_COMM_WORLD, config, ierr)
  call check(ierr, "cairn_init")
  ! The owned columns are contiguous; the halos are rebuilt every step.
  call cairn_protect(region_grid, u(:, 1:nloc), ierr)
  call check(ierr, "cairn_protect(grid)")
  call cairn_protect(region_step, step, ierr)
  call check(ierr, "cairn_protect(step)")

  call cairn_restart_test("heat", -1, latest, ierr)
  call check(ierr, "cairn_restart_test")
  if (latest >= 0) then
    call cairn_restart("heat", latest, restored, ierr)
    call check(ierr, "cairn_restart")
    if (rank == 0) write (output_unit, '(a,i0,a,i0,a)') "heat: resumed from version ", &
        restored, " (step ", step, ")"
  else if (rank == 0) then
    write (output_unit, '(a)') "heat: no checkpoint to restart from, starting at step 0"
  end if
  flush (output_unit)

  do while (step < steps)
    call exchange_halos()
    call sweep()
    step = step + 1
    if (mod(step, every) == 0) then
      call cairn_checkpoint("heat", step, ierr)
      call check(ierr, "cairn_checkpoint")
      if (rank == 0) then
        write (output_unit, '(a,i0,a)') "step ", step, " checkpointed"
        flush (output_unit)
      end if
    end if
  end do

  call write_result()
  call cairn_checkpoint_wait(ierr)
  call check(ierr, "cairn_checkpoint_wait")
  call cairn_finalize(ierr)
  call check(ierr, "cairn_finalize")
  call MPI_Finalize()

contains

  !> Any failure: report it and take the whole job down (a rank that stopped
  !> alone would leave the others waiting in the next collective).
  subroutine check(status, what)
    integer, intent(in) :: status
    character(len=*), intent(in) :: what
    if (status == CAIRN_SUCCESS) return
    write (error_unit, '(a,i0,a)') "heat: rank ", rank, ": " // what // ": " // &
        cairn_error_message(CAIRN_LAST_ERROR)
    flush (error_unit)
    call MPI_Abort(MPI_COMM_WORLD, 1)
  end subroutine

  subroutine parse_options()
    integer :: i, n, stat
    character(len=4096) :: name, value
    steps = -1; every = -1; rows = -1; cols = -1; config = ""; out = ""
    n = command_argument_count()
    do i = 1, n - 1, 2
      call get_command_argument(i, name)
      call get_command_argument(i + 1, value)
      stat = 0
      select case (trim(name))
      case ("--steps"); read (value, *, iostat=stat) steps
      case ("--every"); read (value, *, iostat=stat) every
      case ("--rows"); read (value, *, iostat=stat) rows
      case ("--cols"); read (value, *, iostat=stat) cols
      case ("--config"); config = value
      case ("--out"); out = value
      case default; stat = 1
      end select
      if (stat /= 0) call usage("bad option or value: " // trim(name) // " " // trim(value))
    end do
    if (mod(n, 2) /= 0) call usage("every option needs a value")
    if (steps < 0 .or. every < 1 .or. rows < 3 .or. cols < 3) &
        call usage("--steps, --every, --rows (>= 3) and --cols (>= 3) are required")
    if (cols < nranks) call usage("--cols must be at least the number of ranks")
  end subroutine

  subroutine usage(why)
    character(len=*), intent(in) :: why
    if (rank == 0) write (error_unit, '(a)') "heat_f90: " // why, &
        "usage: heat_f90 --steps N --every K --rows R --cols C [--config FILE] [--out FILE]"
    call MPI_Finalize()
    stop 2
  end subroutine

  !> First global column (0-based) and column count of a rank: the first
  !> cols mod nranks ranks get one more.
  subroutine block_of_columns(cols, rank, nranks, first, count)
    integer, intent(in) :: cols, rank, nranks
    integer, intent(out) :: first, count
    integer :: base, extra
    base = cols / nranks
    extra = mod(cols, nranks)
    first = rank * base + min(rank, extra)
    count = base + merge(1, 0, rank < extra)
  end subroutine

  subroutine exchange_halos()
    call MPI_Sendrecv(u(:, 1), rows, MPI_DOUBLE_PRECISION, left, 0, &
        u(:, nloc + 1), rows, MPI_DOUBLE_PRECISION, right, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
    call MPI_Sendrecv(u(:, nloc), rows, MPI_DOUBLE_PRECISION, right, 1, &
        u(:, 0), rows, MPI_DOUBLE_PRECISION, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  end subroutine

  !> One Jacobi sweep over the interior cells this rank owns.
  subroutine sweep()
    integer :: i, j, jfirst, jlast
    jfirst = merge(2, 1, col0 == 0)            ! global column 1 is boundary
    jlast = merge(nloc - 1, nloc, col0 + nloc == cols)  ! so is the last one
    do j = jfirst, jlast
      do i = 2, rows - 1
        next(i, j) = u(i, j) + alpha * ((u(i - 1, j) + u(i + 1, j)) &
            + (u(i, j - 1) + u(i, j + 1)) - 4.0_real64 * u(i, j))
      end do
    end do
    ! Copy back rather than swap: region 0 stays registered at u.
    u(:, 1:nloc) = next(:, 1:nloc)
  end subroutine

  !> Gathers the owned columns on rank 0, which writes them and the mean.
  subroutine write_result()
    integer, allocatable :: counts(:), displs(:)
    real(real64), allocatable :: grid(:, :)
    integer :: r, first, count, unit
    allocate(counts(nranks), displs(nranks), grid(rows, cols))
    do r = 0, nranks - 1
      call block_of_columns(cols, r, nranks, first, count)
      counts(r + 1) = count * rows
      displs(r + 1) = first * rows
    end do
    call MPI_Gatherv(u(:, 1:nloc), nloc * rows, MPI_DOUBLE_PRECISION, grid, counts, displs, &
        MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD)
    if (rank /= 0) return
    if (len_trim(out) > 0) then
      open (newunit=unit, file=trim(out), access="stream", form="unformatted", &
          status="replace", action="write")
      write (unit) grid
      close (unit)
    end if
    write (output_unit, '(a,i0,a,es25.17)') "heat: done, step ", step, ", mean temperature ", &
        sum(grid) / (real(rows, real64) * cols)
    flush (output_unit)
  end subroutine
end program heat_f90
