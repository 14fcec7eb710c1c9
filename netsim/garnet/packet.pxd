# Types of packet.py for the compiled core (Cython reads this beside the .py; see setup.py).

cimport cython

@cython.final
cdef class Message:
    cdef public long long src, dst
    cdef public object route, tag
    cdef public long long nbytes, unsent, packet_bytes, packets_out, created, start
    cdef public object handed_off, on_delivered


@cython.final
cdef class Packet:
    cdef public Message msg
    cdef public long long nflits, nbytes
    cdef public dict route
    cdef public long long injected
    cdef public bint last
