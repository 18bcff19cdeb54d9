! The Fortran module's promises, in one process (cairn_init_single):
!  - every type of the cairn_protect generic, at ranks 0 to 7, comes back bit
!    for bit after a checkpoint, a scribble and a restart;
!  - a non-contiguous section is rejected with a message that says so;
!  - a Cairn error reaches Fortran as its code and a message naming the cause.
! Prints "protect_test: N passed, M failed"; exits 1 if any failed.
! Usage: protect_test CONFIG_FILE
program protect_test
  use, intrinsic :: iso_fortran_env, only: real32, real64, int32, int64
  use cairn
  implicit none

  real(real32), target :: r4_0, r4_7(2, 1, 2, 1, 2, 1, 3)
  real(real64), target :: r8_1(5), r8_2(4, 3)
  integer(int32), target :: i4_3(2, 3, 4)
  integer(int64), target :: i8_4(2, 2, 2, 3)
  complex(real32), target :: c4_5(1, 2, 3, 2, 1)
  complex(real64), target :: c8_6(2, 1, 1, 2, 1, 3)
  logical, target :: l_1(9)
  real(real64), target :: strided(10, 10)
  character(len=4096) :: config
  character(len=:), allocatable :: message
  integer :: ierr, restored, version, passed, failed

  passed = 0
  failed = 0
  call get_command_argument(1, config)
  call cairn_init_single(config, ierr)
  call expect(ierr == CAIRN_SUCCESS, "cairn_init_single: " // cairn_error_message(CAIRN_LAST_ERROR))

  call fill()
  call protect_all()
  call cairn_checkpoint("fortran", 1, ierr)
  call expect(ierr == CAIRN_SUCCESS, "cairn_checkpoint: " // cairn_error_message(CAIRN_LAST_ERROR))
  call scribble()
  call cairn_restart_test("fortran", -1, version, ierr)
  call expect(ierr == CAIRN_SUCCESS .and. version == 1, "cairn_restart_test finds version 1")
  call cairn_restart("fortran", 1, restored, ierr)
  call expect(ierr == CAIRN_SUCCESS .and. restored == 1, "cairn_restart: " // &
      cairn_error_message(CAIRN_LAST_ERROR))
  call check_restored()

  ! A strided section: one run of bytes cannot hold it.
  call cairn_protect(20, strided(1:10:2, :), ierr)
  message = cairn_error_message(CAIRN_LAST_ERROR)
  call expect(ierr == CAIRN_E_INVALID_ARGUMENT, "a strided section is rejected")
  call expect(index(message, "not contiguous") > 0 .and. index(message, "region 20") > 0, &
      "the rejection says why and names the region: " // message)
  ! A contiguous section of the same array is fine.
  call cairn_protect(20, strided(:, 2:4), ierr)
  call expect(ierr == CAIRN_SUCCESS, "a contiguous section is accepted")

  ! Errors of the library: a version that does not exist, a bad name.
  call cairn_restart("absent", 3, restored, ierr)
  message = cairn_error_message(CAIRN_LAST_ERROR)
  call expect(ierr < 0 .and. index(message, "absent") > 0, "a missing checkpoint is named: " // message)
  call cairn_checkpoint("../escape", 2, ierr)
  call expect(ierr == CAIRN_E_INVALID_ARGUMENT, "a name with .. is an invalid argument")
  call cairn_restart_test("absent", -1, version, ierr)
  call expect(ierr == CAIRN_SUCCESS .and. version == -1, "restart_test of nothing is -1, no error")

  call cairn_finalize(ierr)
  call expect(ierr == CAIRN_SUCCESS, "cairn_finalize")
  call cairn_checkpoint("fortran", 2, ierr)
  call expect(ierr == CAIRN_E_NOT_INITIALIZED, "a call after finalize is NOT_INITIALIZED")

  print '(a,i0,a,i0,a)', "protect_test: ", passed, " passed, ", failed, " failed"
  if (failed > 0) error stop 1

contains

  subroutine expect(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (ok) then
      passed = passed + 1
    else
      failed = failed + 1
      print '(a)', "protect_test: FAILED: " // what
    end if
  end subroutine

  subroutine fill()
    integer :: k
    r4_0 = -0.0_real32
    r4_7 = reshape([(real(k, real32) / 7.0_real32, k = 1, size(r4_7))], shape(r4_7))
    r8_1 = [1.0_real64 / 3.0_real64, -huge(1.0_real64), tiny(1.0_real64), 2.5_real64, 0.0_real64]
    r8_2 = reshape([(sqrt(real(k, real64)), k = 1, 12)], shape(r8_2))
    i4_3 = reshape([(k * 7919 - 50000, k = 1, 24)], shape(i4_3))
    i8_4 = reshape([(int(k, int64) * 1000000007_int64 - 2_int64**61, k = 1, 24)], &
        shape(i8_4))
    c4_5 = reshape([(cmplx(k, -k, real32) / 3.0_real32, k = 1, 12)], shape(c4_5))
    c8_6 = reshape([(cmplx(1.0_real64 / k, k, real64), k = 1, 12)], shape(c8_6))
    l_1 = [(mod(k, 3) == 0, k = 1, 9)]
    strided = 1.0_real64
  end subroutine

  subroutine protect_all()
    integer :: codes(9)
    call cairn_protect(0, r4_0, codes(1))
    call cairn_protect(1, r4_7, codes(2))
    call cairn_protect(2, r8_1, codes(3))
    call cairn_protect(3, r8_2, codes(4))
    call cairn_protect(4, i4_3, codes(5))
    call cairn_protect(5, i8_4, codes(6))
    call cairn_protect(6, c4_5, codes(7))
    call cairn_protect(7, c8_6, codes(8))
    call cairn_protect(8, l_1, codes(9))
    call expect(all(codes == CAIRN_SUCCESS), "cairn_protect of every type and rank: " // &
        cairn_error_message(CAIRN_LAST_ERROR))
  end subroutine

  subroutine scribble()
    r4_0 = 1.0; r4_7 = 2.0; r8_1 = 3.0; r8_2 = 4.0; i4_3 = 5; i8_4 = 6
    c4_5 = (7.0, 7.0); c8_6 = (8.0, 8.0); l_1 = .false.
  end subroutine

  !> Compares bit patterns (transfer to integers): -0.0 and the last bit count.
  subroutine check_restored()
    integer :: k
    real(real32) :: r4_7_ref(2, 1, 2, 1, 2, 1, 3)
    r4_7_ref = reshape([(real(k, real32) / 7.0_real32, k = 1, size(r4_7))], shape(r4_7))
    call expect(transfer(r4_0, 0_int32) == transfer(-0.0_real32, 0_int32), "real(4) rank 0")
    call expect(all(transfer(r4_7, [0_int32]) == transfer(r4_7_ref, [0_int32])), "real(4) rank 7")
    call expect(all(transfer(r8_1, [0_int64]) == transfer([1.0_real64 / 3.0_real64, &
        -huge(1.0_real64), tiny(1.0_real64), 2.5_real64, 0.0_real64], [0_int64])), "real(8) rank 1")
    call expect(all(r8_2 == reshape([(sqrt(real(k, real64)), k = 1, 12)], shape(r8_2))), &
        "real(8) rank 2")
    call expect(all(i4_3 == reshape([(k * 7919 - 50000, k = 1, 24)], shape(i4_3))), &
        "integer(4) rank 3")
    call expect(all(i8_4 == reshape([(int(k, int64) * 1000000007_int64 - 2_int64**61, &
        k = 1, 24)], shape(i8_4))), "integer(8) rank 4")
    call expect(all(c4_5 == reshape([(cmplx(k, -k, real32) / 3.0_real32, k = 1, 12)], &
        shape(c4_5))), "complex(4) rank 5")
    call expect(all(c8_6 == reshape([(cmplx(1.0_real64 / k, k, real64), k = 1, 12)], &
        shape(c8_6))), "complex(8) rank 6")
    call expect(all(l_1 .eqv. [(mod(k, 3) == 0, k = 1, 9)]), "logical rank 1")
  end subroutine
end program protect_test
