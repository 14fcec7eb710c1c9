# Types of booksim.py for the compiled core (Cython reads this beside the .py; see setup.py).

cimport cython
from netsim.garnet.allocators.base cimport SwitchAllocator
from netsim.garnet.input_unit cimport InputUnit, VirtualChannel
from netsim.garnet.output_unit cimport OutputUnit
from netsim.garnet.cycle_queue cimport CycleQueue
from netsim.garnet cimport crossbar
from netsim.garnet.core cimport RAISED

cdef long long NEVER


cdef class BookSimAllocator(SwitchAllocator):
    cdef public long long route_cycles, input_vcs, out_vcs, outs, va_count, va_askers, sa_bidders
    cdef public list vc_out, va_vcs, sa_ports
    cdef public long long[::1] out_base, va_grant, va_accept, sa_grant, sa_accept, sa_vc
    cdef public long long[::1] va_until, va_asked, va_granted, sa_outs, sa_bid, sa_askers, sa_granted

    @cython.locals(wake_at="long long", vc=VirtualChannel, ready=CycleQueue, at="long long", out=OutputUnit, port=InputUnit,
                   outs="long long", slot="long long", rival="long long", held="long long")
    cpdef long long allocate(self, long long cycle) except? RAISED
    @cython.locals(start="long long", n="long long")
    cpdef bint _vc_first(self, InputUnit port, long long vc, long long rival) except? RAISED
    @cython.locals(room="long long", first="long long", out=OutputUnit, lo="long long", hi="long long")
    cpdef bint _ask_vcs(self, VirtualChannel vc, long long cycle) except? RAISED
    @cython.locals(base="long long", inputs="long long", v="long long", g="long long", best="long long",
                   count="long long")
    cpdef void _ask_output(self, VirtualChannel vc, OutputUnit out, long long lo, long long hi, long long cycle,
                           long long room)
    @cython.locals(outputs="long long", first="long long", k="long long",
                   vc=VirtualChannel, until="long long", start="long long", best="long long", i="long long",
                   g="long long")
    cpdef void _allocate_vcs(self, long long cycle)
    @cython.locals(out=OutputUnit, out_vc="long long", option=OutputUnit, lo="long long", hi="long long")
    cpdef void _take(self, VirtualChannel vc, long long g, long long cycle)
    @cython.locals(ports="long long", outs="long long", wake_at="long long",
                   port=InputUnit, p="long long", o="long long", best="long long", start="long long",
                   won="long long", alone="long long", share="long long", at="long long", bidders=list,
                   k="long long")
    cpdef long long _allocate_switch(self, long long cycle) except? RAISED
    cpdef long long _cross(self, InputUnit port, OutputUnit out, VirtualChannel vc, long long cycle,
                           long long share) except? RAISED
    @cython.locals(ready=CycleQueue)
    cpdef long long earliest_bid(self, VirtualChannel vc, long long cycle) except? RAISED
