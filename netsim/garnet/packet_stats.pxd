# Types of packet_stats.py for the compiled core (Cython reads this beside the .py; see setup.py).

cimport cython
from netsim.garnet.packet cimport Message, Packet
from netsim.garnet.core cimport RAISED


@cython.final
cdef class PacketStats:
    cdef public long long cut, packets, flits, bytes, latency, network_latency, hops
    cdef public dict histogram

    cpdef void cut_one(self) noexcept
    @cython.locals(message=Message, latency="long long", histogram=dict)
    cpdef long long add(self, Packet packet, long long cycle) except? RAISED


@cython.final
cdef class WindowTally:
    cdef public long long warmup, end, accepted_flits, measured_in
    cdef public PacketStats stats

    @cython.locals(created="long long")
    cpdef void observe(self, Packet packet, long long cycle)
