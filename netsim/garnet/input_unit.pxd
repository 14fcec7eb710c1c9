# Types of input_unit.py for the compiled core (Cython reads this beside the .py; see setup.py).

cimport cython
from netsim.garnet.router cimport Router
from netsim.garnet.output_unit cimport OutputUnit
from netsim.garnet.crossbar cimport Slots
from netsim.garnet.packet cimport Packet
from netsim.garnet.cycle_queue cimport CycleQueue
from netsim.garnet.departures cimport Departures
from netsim.garnet.core cimport RAISED

cdef long long NEVER


@cython.final
cdef class VirtualChannel:
    cdef public InputUnit port
    cdef public long long index, rank
    cdef public CycleQueue ready
    cdef public Packet front
    cdef public list behind
    cdef public long long sent
    cdef public OutputUnit out
    cdef public long long lo, hi
    cdef public object options
    cdef public long long out_vc, head_from, tail_left, peak, popped_in, popped, residency

    cpdef void route_to(self, OutputUnit out, long long lo, long long hi) noexcept
    cpdef void offer(self, tuple options)
    cpdef void grant(self, long long out_vc) noexcept
    cpdef void gate(self, long long cycle) noexcept


@cython.final
cdef class InputUnit:
    cdef public Router router
    cdef public object name
    cdef public list vcs
    cdef public long long depth
    cdef public OutputUnit upstream
    cdef public long long credit_delay, busy_until, link_id, index, occupied, head_delay, body_delay, stage, held_until
    cdef public Slots slots

    @cython.locals(at="long long")
    cpdef long long next_free(self, long long cycle) except? RAISED
    @cython.locals(ready=CycleQueue, count="long long")
    cpdef void receive(self, VirtualChannel vc, Packet packet, bint head, Departures departures, long long delay)
    @cython.locals(ready=CycleQueue, count="long long", last="long long", waited="long long", sent="long long",
                   cycle="long long")
    cpdef bint send_flits(self, VirtualChannel vc, Departures departures) except? RAISED
    @cython.locals(vc=VirtualChannel, packet=Packet)
    cpdef void in_flight(self, dict into)
