# Types of router.py for the compiled core (Cython reads this beside the .py; see setup.py).

cimport cython
from netsim.garnet.clock cimport Component, CycleClock, relative
from netsim.garnet.input_unit cimport VirtualChannel
from netsim.garnet.allocators.base cimport SwitchAllocator

cdef long long NEVER


cdef class Router(Component):
    cdef public CycleClock clock
    cdef public long long node, pipeline
    cdef public list inputs, outputs
    cdef public list occupied
    cdef public SwitchAllocator allocator
    cdef public long long last_move

    cpdef void occupy(self, VirtualChannel vc)
    @cython.locals(occupied=list, i=Py_ssize_t)
    cpdef void vacate(self, VirtualChannel vc)
    cpdef void moved(self, long long cycle) noexcept
    cpdef void step(self, long long cycle)
