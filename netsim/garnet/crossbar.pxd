# Types of crossbar.py for the compiled core (Cython reads this beside the .py; see setup.py).

cimport cython
from netsim.garnet.router cimport Router
from netsim.garnet.input_unit cimport InputUnit, VirtualChannel
from netsim.garnet.output_unit cimport OutputUnit
from netsim.garnet.packet cimport Packet
from netsim.garnet.cycle_queue cimport CycleQueue
from netsim.garnet.departures cimport Departures, evenly, listed
from netsim.garnet.core cimport RAISED

cdef long long PRUNE_AT


@cython.final
cdef class Slots:
    cdef public Departures run
    cdef public bytearray taken
    cdef public long long base, width, clear_from

    cpdef bint free(self, long long cycle) except? RAISED
    @cython.locals(run=Departures, at="long long")
    cdef long long _start_near(self, long long cycle) except? RAISED - 1  # (-1 is an answer: none)
    @cython.locals(i=Py_ssize_t)
    cdef bint _taken(self, long long cycle) except? RAISED
    @cython.locals(run=Departures, width="long long", start="long long", end=Py_ssize_t, taken=bytearray)
    cpdef long long next_free(self, long long cycle) except? RAISED
    @cython.locals(taken=bytearray, past="long long", end="long long")
    cpdef void take(self, Departures cycles, long long now)
    @cython.locals(taken=bytearray, top=Py_ssize_t, k="long long")
    cdef void _mark(self, Departures cycles)


@cython.locals(link=Slots, crossbar=Slots, step="long long", held="long long", pending=CycleQueue, cycles=list,
               at="long long", k="long long")
cpdef Departures shared_departures(CycleQueue ready, long long first, long long count, OutputUnit out, long long out_vc,
                               InputUnit port, long long share)
@cython.locals(spacing="long long", last="long long", held="long long", pending=CycleQueue, cycles=list,
               depart="long long", at="long long", k="long long")
cpdef Departures departures(CycleQueue ready, long long first, long long count, OutputUnit out, long long out_vc)
@cython.locals(packet=Packet, head=bint, tail=bint)
cpdef bint traverse(Router router, VirtualChannel vc, OutputUnit out, Departures leaving) except? RAISED
