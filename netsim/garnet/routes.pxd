# Types of routes.py for the compiled core (Cython reads this beside the .py; see setup.py).

cimport cython


@cython.final
cdef class RouteTables:
    cdef public object topology, routing, params
    cdef public object npus  # a Python int: route keys may exceed 64 bits on a huge network
    cdef public dict tables
    cdef public bint join_legs
    cdef public list link_units, between_routers, hop_entries, link_dims
    cdef public dict injector_of, eject_of, nic_of, class_entries, nic_cycles

    @cython.locals(key=object, entry=object)
    cpdef tuple route(self, object src, object dst, object ties)
    @cython.locals(link_ids=list, classes=list, table=dict, inner="long long", k="Py_ssize_t", entries=object)
    cpdef tuple _build(self, object src, object dst, object ties)
    @cython.locals(below=object, first=tuple, rest=tuple, table=dict)
    cpdef tuple _joined(self, object src, object dst, object ties, object via, object dim)
    cpdef object _nic_cycles_of(self, frozenset dims)
    cpdef tuple hop_entry(self, object link_id, object index, object count)
    @cython.locals(table=dict, hops="long long")
    cpdef tuple path_table(self, object link_ids, object classes, object dst)
