! fortran_f08.f90 — the same program with `use mpi_f08`.
program ring
  use mpi_f08
  implicit none
  integer :: rank, nproc, i, right, left
  integer :: buf(5), rbuf(5)
  type(MPI_Status) :: st
  type(MPI_Request) :: reqs(2)
  double precision :: x, y
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nproc)
  right = mod(rank + 1, nproc)
  left = mod(rank + nproc - 1, nproc)
  buf = rank
  do i = 1, 4
    if (mod(rank, 2) == 0) then
      call MPI_Send(buf, 5, MPI_INTEGER, right, 3, MPI_COMM_WORLD)
      call MPI_Recv(rbuf, 5, MPI_INTEGER, left, 3, MPI_COMM_WORLD, st)
    else
      call MPI_Recv(rbuf, 5, MPI_INTEGER, left, 3, MPI_COMM_WORLD, st)
      call MPI_Send(buf, 5, MPI_INTEGER, right, 3, MPI_COMM_WORLD)
    end if
  end do
  x = rank
  do i = 1, 2
    call MPI_Allreduce(x, y, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD)
  end do
  call MPI_Barrier(MPI_COMM_WORLD)
  call MPI_Irecv(rbuf, 5, MPI_INTEGER, left, 4, MPI_COMM_WORLD, reqs(1))
  call MPI_Isend(buf, 5, MPI_INTEGER, right, 4, MPI_COMM_WORLD, reqs(2))
  call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE)
  call MPI_Finalize()
end program ring
