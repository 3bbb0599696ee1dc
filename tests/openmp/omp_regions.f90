! omp_regions.f90 — omp_regions.c in Fortran (gfortran -fopenmp: libgomp's entry points):
!   omp_regions_f REGIONS THREADS SKEW_MS, the same constructs and the same known counts.
program omp_regions
  use omp_lib
  use iso_c_binding, only: c_int
  implicit none
  interface
    function usleep(us) bind(C, name="usleep")
      import :: c_int
      integer(c_int), value :: us
      integer(c_int) :: usleep
    end function usleep
  end interface
  character(len=32) :: arg
  integer :: regions, threads, r, i, rc
  real(8) :: skew
  integer :: counter
  call get_command_argument(1, arg); read (arg, *) regions
  call get_command_argument(2, arg); read (arg, *) threads
  call get_command_argument(3, arg); read (arg, *) skew
  counter = 0
  do r = 1, regions
    !$omp parallel num_threads(threads) private(i, rc)
    !$omp do schedule(dynamic, 1)
    do i = 1, 2 * threads
      rc = usleep(200_c_int)
    end do
    !$omp end do
    !$omp barrier
    !$omp critical
    counter = counter + 1
    !$omp end critical
    rc = usleep(int(skew * 1000d0 * omp_get_thread_num(), c_int))
    !$omp end parallel
  end do
  print '(a, i0)', 'counter ', counter
  if (counter /= regions * threads) stop 1
end program omp_regions
