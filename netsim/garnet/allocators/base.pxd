# Types of base.py for the compiled core (Cython reads this beside the .py; see setup.py).

cimport cython
from netsim.garnet.router cimport Router
from netsim.garnet.input_unit cimport InputUnit, VirtualChannel
from netsim.garnet.output_unit cimport OutputUnit
from netsim.garnet.packet cimport Packet
from netsim.garnet.cycle_queue cimport CycleQueue
from netsim.garnet.departures cimport Departures, evenly
from netsim.garnet.core cimport RAISED

cdef long long NEVER
cdef long long BATCH_MAX_OCCUPIED


cdef class SwitchAllocator:
    cdef public Router router
    cdef public object node  # a Python int: route tables' key (no int made per lookup past 256 routers)
    cdef public object routing
    cdef public bint whole_packets, batch, by_table, choices
    cdef public long long horizon

    cpdef long long allocate(self, long long cycle) except? RAISED
    @cython.locals(out=OutputUnit)
    cpdef OutputUnit route(self, VirtualChannel vc)
    cpdef tuple route_of(self, Packet packet)
    @cython.locals(out=OutputUnit, lo="long long", hi="long long", at="long long")
    cpdef long long wait_for_vc(self, VirtualChannel vc, long long cycle, long long room) except? RAISED
    @cython.locals(packet=Packet)
    cpdef bint wants(self, VirtualChannel vc, OutputUnit out) except? RAISED
    @cython.locals(port=InputUnit, ready=CycleQueue, at="long long", out=OutputUnit, lo="long long", hi="long long",
                   unknown="long long", room="long long")
    cpdef long long earliest_bid(self, VirtualChannel vc, long long cycle) except? RAISED
    @cython.locals(packet=Packet, remaining="long long", cpf="long long", port=InputUnit, limit="long long",
                   other=VirtualChannel, at="long long", count="long long", out_vc="long long", held="long long",
                   pending=CycleQueue, ready=CycleQueue, k="long long", cycles=Departures)
    cpdef Departures leaving(self, VirtualChannel vc, OutputUnit out, long long first, long long now, long long share=*)
