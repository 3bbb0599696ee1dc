! fortran_mpi.f90 — `use mpi` (the mpif.h-style binding): 4 ring messages (tag 3, 5
! integers), 2 Allreduce, 1 Barrier, one Isend/Irecv pair completed by Waitall.
program ring
  use mpi
  implicit none
  integer :: ierr, rank, nproc, i, right, left, reqs(2)
  integer :: buf(5), rbuf(5), st(MPI_STATUS_SIZE)
  double precision :: x, y
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nproc, ierr)
  right = mod(rank + 1, nproc)
  left = mod(rank + nproc - 1, nproc)
  buf = rank
  do i = 1, 4
    if (mod(rank, 2) == 0) then
      call MPI_Send(buf, 5, MPI_INTEGER, right, 3, MPI_COMM_WORLD, ierr)
      call MPI_Recv(rbuf, 5, MPI_INTEGER, left, 3, MPI_COMM_WORLD, st, ierr)
    else
      call MPI_Recv(rbuf, 5, MPI_INTEGER, left, 3, MPI_COMM_WORLD, st, ierr)
      call MPI_Send(buf, 5, MPI_INTEGER, right, 3, MPI_COMM_WORLD, ierr)
    end if
  end do
  x = rank
  do i = 1, 2
    call MPI_Allreduce(x, y, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  end do
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Irecv(rbuf, 5, MPI_INTEGER, left, 4, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Isend(buf, 5, MPI_INTEGER, right, 4, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE, ierr)
  call MPI_Finalize(ierr)
end program ring
