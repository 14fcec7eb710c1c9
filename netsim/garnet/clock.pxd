# Types of clock.py for the compiled core (Cython reads this beside the .py; see setup.py). NEVER stays
# a Python name here, which the other modules import (each declares its own C copy).

cimport cython
from netsim.garnet.core cimport RAISED

cdef long long INLINE_CYCLES, WHEEL

cpdef long long relative(long long wake, long long c)


cdef class Component:
    cdef public long long next_wake

    cpdef void step(self, long long cycle)


@cython.final
cdef class CycleClock:
    cdef public object env
    cdef public double clock_ghz
    cdef public list slots
    cdef public long long[::1] slot_cycle
    cdef public dict overflow
    cdef public list due
    cdef public long long armed
    cdef public double limit
    cdef public long long cycle, steps
    cdef public object after_cycle
    cdef public long long hook_at

    cpdef long long now_cycle(self) except? RAISED
    cpdef double ns(self, double cycle)
    @cython.locals(slot="long long")
    cpdef void wake(self, Component component, long long cycle)
    @cython.locals(slot="long long")
    cpdef list bucket(self, long long cycle)
    @cython.locals(bucket=list, slot="long long")
    cpdef bint _place(self, Component component, long long cycle) except? RAISED
    @cython.locals(slot="long long", bucket=list)
    cpdef void _drop(self, long long cycle)
    @cython.locals(cycles=list)
    cpdef tuple sketch(self, long long c)
    cpdef void _arm(self, long long cycle)
    @cython.locals(due=list, bucket=list, component=Component, cycle="long long", budget="long long",
                   clock_ghz=double, at=double, limit=double)
    cpdef void _fire(self, object event)
