# Types of sender.py for the compiled core (Cython reads this beside the .py; see setup.py).

cimport cython
from netsim.garnet.packet cimport Message
from netsim.garnet.nic cimport Injector
from netsim.garnet.routes cimport RouteTables


@cython.final
cdef class Sender:
    cdef public RouteTables tables
    cdef public object routing
    cdef public long long npus
    cdef public dict pair_routes
    cdef public object fast_forward

    @cython.locals(pair="long long", route=object, fixed=object)
    cpdef tuple route(self, long long src, long long dst)
    @cython.locals(route=tuple, message=Message, injector=Injector)
    cpdef Message send(self, long long src, long long dst, long long nbytes, object tag, long long packet_bytes,
                       object handed_off, object on_delivered, long long now, long long delay)
