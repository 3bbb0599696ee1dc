# ccall.jl — MPI from Julia 1.5 through ccall into MPICH (MPI.jl cannot be installed here):
# Init, 4 ring messages of 8 bytes (tag 6) by Send/Recv, 2 Allreduce, Barrier, Finalize.
# Handles are MPICH's (mpi.h): MPI_COMM_WORLD 0x44000000, MPI_BYTE 0x4c00010d,
# MPI_DOUBLE 0x4c00080b, MPI_SUM 0x58000003, MPI_STATUS_IGNORE (MPI_Status *)1.
const libmpi = "libmpich.so.12"
const COMM_WORLD = Cint(0x44000000)
const BYTE = Cint(0x4c00010d)
const DOUBLE = Cint(0x4c00080b)
const SUM = Cint(0x58000003)
const STATUS_IGNORE = Ptr{Cvoid}(1)

ccall((:MPI_Init, libmpi), Cint, (Ptr{Cint}, Ptr{Ptr{Ptr{UInt8}}}), C_NULL, C_NULL)
rank = Ref{Cint}(0); size = Ref{Cint}(0)
ccall((:MPI_Comm_rank, libmpi), Cint, (Cint, Ref{Cint}), COMM_WORLD, rank)
ccall((:MPI_Comm_size, libmpi), Cint, (Cint, Ref{Cint}), COMM_WORLD, size)
r, n = rank[], size[]
buf = zeros(UInt8, 8); rbuf = zeros(UInt8, 8)
for i in 1:4
    if r % 2 == 0
        ccall((:MPI_Send, libmpi), Cint, (Ptr{UInt8}, Cint, Cint, Cint, Cint, Cint), buf, 8, BYTE, (r + 1) % n, 6, COMM_WORLD)
        ccall((:MPI_Recv, libmpi), Cint, (Ptr{UInt8}, Cint, Cint, Cint, Cint, Cint, Ptr{Cvoid}), rbuf, 8, BYTE, (r + n - 1) % n, 6, COMM_WORLD, STATUS_IGNORE)
    else
        ccall((:MPI_Recv, libmpi), Cint, (Ptr{UInt8}, Cint, Cint, Cint, Cint, Cint, Ptr{Cvoid}), rbuf, 8, BYTE, (r + n - 1) % n, 6, COMM_WORLD, STATUS_IGNORE)
        ccall((:MPI_Send, libmpi), Cint, (Ptr{UInt8}, Cint, Cint, Cint, Cint, Cint), buf, 8, BYTE, (r + 1) % n, 6, COMM_WORLD)
    end
end
x = Ref{Float64}(r); y = Ref{Float64}(0)
for i in 1:2
    ccall((:MPI_Allreduce, libmpi), Cint, (Ref{Float64}, Ref{Float64}, Cint, Cint, Cint, Cint), x, y, 1, DOUBLE, SUM, COMM_WORLD)
end
ccall((:MPI_Barrier, libmpi), Cint, (Cint,), COMM_WORLD)
ccall((:MPI_Finalize, libmpi), Cint, ())
