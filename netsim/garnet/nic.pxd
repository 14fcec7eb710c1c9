# Types of nic.py for the compiled core (Cython reads this beside the .py; see setup.py).

cimport cython
from netsim.garnet.clock cimport Component, CycleClock, relative
from netsim.garnet.output_unit cimport OutputUnit
from netsim.garnet.packet cimport Message, Packet
from netsim.garnet.packet_stats cimport PacketStats
from netsim.garnet cimport crossbar
from netsim.garnet.departures cimport Departures, evenly

cdef long long NEVER


cdef class Injector(Component):
    cdef public object network
    cdef public CycleClock clock
    cdef public object queue
    cdef public Packet packet
    cdef public long long flit, out_vc
    cdef public OutputUnit out
    cdef public bint whole_packets, batch
    cdef public long long tail_at
    cdef public bint per_packet
    cdef public long long sized_bytes, sized_flits

    cpdef void submit(self, Message message)
    @cython.locals(packet=Packet, out=OutputUnit, message=Message, start="long long", nflits="long long",
                   out_vc="long long", whole=bint, nvcs="long long", room="long long", tail=bint,
                   leaving=Departures)
    cpdef void step(self, long long cycle)
    @cython.locals(nbytes="long long", stats=PacketStats, fast_forward=object)
    cpdef Packet cut(self, Message message)
    @cython.locals(message=Message)
    cpdef void _finish(self, Packet packet, long long cycle)
    cpdef void _wake(self, long long cycle)
    cpdef void in_flight(self, dict into)


cdef class Receiver(Component):
    cdef public object network
    cdef public CycleClock clock
    cdef public list arrivals

    cpdef void arrive(self, Packet packet, long long cycle)
    @cython.locals(packet=Packet)
    cpdef void in_flight(self, dict into)
    @cython.locals(packet=Packet, arrivals=list)
    cpdef void step(self, long long cycle)
    @cython.locals(stats=PacketStats, latency="long long", message=Message)
    cpdef void _arrived(self, Packet packet, long long cycle)
