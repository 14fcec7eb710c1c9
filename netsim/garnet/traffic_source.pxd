# Types of traffic_source.py for the compiled core (Cython reads this beside the .py; see setup.py).

cimport cython
from netsim.garnet.clock cimport Component, CycleClock
from netsim.garnet.sender cimport Sender
from netsim.garnet.core cimport RAISED
cimport libc.math as math  # (math.log in the source: C's log, which Python's calls)


@cython.locals(draw=double, dst="long long")
cpdef long long uniform_destination(long long npus, long long src, object rng, bint others) except? RAISED


cdef class TrafficSource(Component):
    cdef public CycleClock clock
    cdef public Sender sender
    cdef public long long npu
    cdef public object rng
    cdef public double log_q
    cdef public object pattern, topology
    cdef public bint others
    cdef public long long fixed_dst, packet_bytes, delay, warmup, end, generated

    cpdef long long gap(self) except? RAISED
    cpdef void start(self)
    @cython.locals(dst="long long")
    cpdef void step(self, long long cycle)
