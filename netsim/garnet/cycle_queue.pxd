# Types of cycle_queue.py for the compiled core (Cython reads this beside the .py; see setup.py).

cimport cython
from netsim.garnet.departures cimport Departures


cdef class CycleQueue:
    cdef long long[::1] buf
    cdef public long long head, count, mask

    cpdef long long front(self)
    cpdef long long back(self)
    cpdef long long at(self, long long k)
    cpdef void push(self, long long cycle)
    @cython.locals(k="long long")
    cpdef void push_shifted(self, Departures departures, long long delay)
    @cython.locals(cycle="long long")
    cpdef long long pop(self)
    cpdef void drop(self, long long n)
    @cython.locals(total="long long", _="long long")
    cpdef long long pop_sum(self, long long n)
    @cython.locals(lo="long long", hi="long long", mid="long long")
    cpdef long long count_until(self, long long cycle)
    cpdef void clear(self)
    @cython.locals(k="long long")
    cpdef void shift(self, long long span)
    @cython.locals(k="long long")
    cpdef void _grow(self)
