# Types of garnet.py for the compiled core (Cython reads this beside the .py; see setup.py).

cimport cython
from netsim.garnet.allocators.base cimport SwitchAllocator
from netsim.garnet.input_unit cimport InputUnit, VirtualChannel
from netsim.garnet.output_unit cimport OutputUnit
from netsim.garnet.cycle_queue cimport CycleQueue
from netsim.garnet cimport crossbar
from netsim.garnet.departures cimport Departures
from netsim.garnet.core cimport RAISED

cdef long long NEVER


cdef class GarnetAllocator(SwitchAllocator):
    cdef public long long[::1] next_vc, next_port, pick_out_vc, bid_by, bid_port
    cdef public long long ports
    cdef public list picking, picked, wanted, bidding

    @cython.locals(occupied=list, wake_at="long long", whole=bint, picked=list,
                   vc=VirtualChannel, ready=CycleQueue, best=VirtualChannel, port=InputUnit, at="long long",
                   p="long long", distance="long long", out=OutputUnit, out_vc="long long", room="long long",
                   picking=list, ports="long long", bidding=list,
                   o="long long", rival="long long", best_distance="long long")
    cpdef long long allocate(self, long long cycle) except? RAISED
    @cython.locals(count="long long", out=OutputUnit)
    cpdef long long _waiting(self, InputUnit port) except? RAISED
    @cython.locals(port=InputUnit, wanted=list, picking=list)
    cpdef void _clear_picks(self)
    @cython.locals(ready=CycleQueue, port=InputUnit, out=OutputUnit, at="long long", out_vc="long long",
                   room="long long")
    cpdef long long _lone(self, VirtualChannel vc, long long cycle) except? RAISED
    @cython.locals(wake_at="long long", best="long long", most="long long", options=tuple, k="long long",
                   out=OutputUnit, lo="long long", hi="long long", at="long long", free="long long", v="long long")
    cpdef long long _choose(self, VirtualChannel vc, long long cycle, long long room) except? RAISED
    @cython.locals(port=InputUnit, leaving=Departures)
    cpdef long long _grant(self, VirtualChannel vc, OutputUnit out, long long out_vc, long long cycle,
                           long long at_port, long long at_output) except? RAISED
