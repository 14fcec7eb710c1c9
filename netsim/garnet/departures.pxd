# Types of departures.py for the compiled core (Cython reads this beside the .py; see setup.py).

cimport cython


cdef class Departures:
    cdef public long long first, last, count, spacing

    cpdef long long at(self, long long k) except? -1
    cpdef long long total(self) except? -1
    cpdef bint holds(self, long long cycle) except? -1
    @cython.locals(k="long long")
    cpdef list to_list(self)
    cpdef Departures shifted(self, long long span)


cdef class Listed(Departures):
    cdef public list cycles

    cpdef long long at(self, long long k) except? -1
    cpdef long long total(self) except? -1
    cpdef bint holds(self, long long cycle) except? -1
    cpdef Departures shifted(self, long long span)


cpdef long long run_sum(long long first, long long count, long long spacing) except? -1
@cython.locals(departures=Departures)
cpdef Departures evenly(long long first, long long count, long long spacing)
@cython.locals(departures=Listed)
cpdef Departures listed(list cycles)
