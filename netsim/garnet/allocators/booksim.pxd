# Types of booksim.py for the compiled core (Cython reads this beside the .py; see setup.py).

cimport cython
from netsim.garnet.allocators.base cimport SwitchAllocator
from netsim.garnet.input_unit cimport InputUnit, VirtualChannel
from netsim.garnet.output_unit cimport OutputUnit

cdef long long NEVER


cdef class BookSimAllocator(SwitchAllocator):
    cdef public long long route_cycles, input_vcs
    cdef public list out_vcs, out_base, va_grant, va_accept, sa_grant, sa_accept, sa_vc

    @cython.locals(wake_at="long long", va_bids=list, sa_bids=dict, vc=VirtualChannel, at="long long",
                   out=OutputUnit, room="long long", base="long long", port=InputUnit, bids=dict)
    cpdef long long allocate(self, long long cycle)
    cpdef bint _vc_first(self, InputUnit port, VirtualChannel vc, VirtualChannel rival)
    @cython.locals(out=OutputUnit)
    cpdef void _take(self, VirtualChannel vc, long long g, long long cycle)
    cpdef long long _cross(self, InputUnit port, OutputUnit out, VirtualChannel vc, long long cycle, long long share)
    cpdef long long earliest_bid(self, VirtualChannel vc, long long cycle)
