# reader_abi.jl — the C reader's view of one event (jager_event, 32 bytes; abi_tests.jl
# checks the size), included into each test reader module (reader.jl, dispatch_reader.jl,
# gc_tests.jl's GcReader).
struct Event
    rec::Ptr{UInt8}
    thread::UInt32
    type::UInt16
    reserved::UInt16
    time_ns::UInt64
    end_ns::UInt64
end
