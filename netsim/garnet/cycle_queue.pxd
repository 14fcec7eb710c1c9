# Types of cycle_queue.py for the compiled core (Cython reads this beside the .py; see setup.py).

cimport cython
from netsim.garnet.departures cimport Departures, run_sum
from netsim.garnet.core cimport RAISED

cdef long long FIRST, COUNT, SPACING


@cython.final
cdef class CycleQueue:
    cdef long long[::1] buf
    cdef public long long head, runs, mask, count, seek_run, seek_start, front_cycle

    @cython.locals(runs=list, r="long long", slot="long long", first="long long", count="long long",
                   spacing="long long")
    cpdef tuple relative(self, long long c, long long skip)
    cpdef long long front(self) except? RAISED
    @cython.locals(slot="long long")
    cpdef long long back(self) except? RAISED
    @cython.locals(slot="long long")
    cpdef long long at(self, long long k) except? RAISED
    @cython.locals(slot="long long", count="long long")
    cpdef void push(self, long long cycle)
    @cython.locals(k="long long")
    cpdef void push_shifted(self, Departures departures, long long delay)
    @cython.locals(cycle="long long")
    cpdef long long pop(self) except? RAISED
    @cython.locals(slot="long long", count="long long")
    cpdef void drop(self, long long n)
    @cython.locals(total="long long", left="long long", r="long long", slot="long long", take="long long")
    cpdef long long pop_sum(self, long long n) except? RAISED
    @cython.locals(total="long long", r="long long", slot="long long", first="long long", count="long long",
                   spacing="long long")
    cpdef long long count_until(self, long long cycle) except? RAISED
    cpdef void clear(self) noexcept
    @cython.locals(r="long long")
    cpdef void shift(self, long long span)
    @cython.locals(slot="long long")
    cpdef void _append(self, long long first, long long count, long long spacing)
    @cython.locals(size="long long", r="long long", slot="long long", field="long long", old="long long[::1]")
    cpdef void _grow(self)
