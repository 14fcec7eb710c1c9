# Types of departures.py for the compiled core (Cython reads this beside the .py; see setup.py).

cimport cython
from netsim.garnet.core cimport RAISED


cdef class Departures:
    cdef public long long first, last, count, spacing

    cpdef long long at(self, long long k) except? RAISED
    cpdef long long total(self) except? RAISED
    cpdef bint holds(self, long long cycle) except? RAISED
    cpdef list to_list(self)
    cpdef Departures shifted(self, long long span)


cdef class Listed(Departures):
    cdef public list cycles

    cpdef long long at(self, long long k) except? RAISED
    cpdef long long total(self) except? RAISED
    cpdef bint holds(self, long long cycle) except? RAISED
    cpdef Departures shifted(self, long long span)


cpdef long long run_sum(long long first, long long count, long long spacing) except? RAISED
@cython.locals(departures=Departures)
cpdef Departures evenly(long long first, long long count, long long spacing)
@cython.locals(departures=Listed)
cpdef Departures listed(list cycles)
