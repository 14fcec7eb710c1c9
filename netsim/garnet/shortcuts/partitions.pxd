# Types of partitions.py for the compiled core (Cython reads this beside the .py; see setup.py).

cimport cython
from netsim.garnet.clock cimport CycleClock, relative
from netsim.garnet.input_unit cimport InputUnit
from netsim.garnet.output_unit cimport OutputUnit
from netsim.garnet.nic cimport Injector, Receiver
from netsim.garnet.packet cimport Message, Packet
from netsim.garnet.packet_stats cimport PacketStats
from netsim.garnet.core cimport RAISED

cdef long long NEVER
cdef long long SKIP_WORTH


@cython.final
cdef class Partition:
    cdef public dict messages
    cdef public set units
    cdef public list inputs, outputs, injectors, receivers
    cdef public long long born, ahead_until, probes, period, seeded
    cdef public bint stale, queued
    cdef public object pilot, reference
    cdef public set sketches
    cdef public dict seen
    cdef public list arrivals, unsent_deltas, seed_counters, fields
    cdef public tuple seed

    cpdef void forget(self)
    cpdef void _forget(self)
    cpdef void reseed(self, tuple signature, long long cycle, list counters)
    @cython.locals(fields=list)
    cpdef list counter_fields(self)
    cpdef void add(self, Message message, tuple units)


@cython.final
cdef class PartitionForward:
    cdef public object network
    cdef public CycleClock clock
    cdef public PacketStats stats
    cdef public long long skipped_cycles, skips, partitions_found, lived, packets_to_probe
    cdef public dict of_unit, of_message, units_of, routes, loose
    cdef public list due, deliveries
    cdef public long long started, flit_bytes

    @cython.locals(partition=Partition, delivered=bint)
    cpdef void changed(self, object message)
    @cython.locals(partition=Partition)
    cpdef void cut(self, Injector injector, Message message)
    @cython.locals(partition=Partition)
    cpdef void arrived(self, Packet packet, long long latency)
    @cython.locals(route=tuple, units=tuple)
    cpdef tuple _units(self, Message message)
    @cython.locals(cycle="long long", order="long long", loose=dict, other=Message, first_cut="long long",
                   other_order="long long")
    cpdef Partition _start(self, Message message)
    @cython.locals(deliveries=list, packets="long long", earliest="long long")
    cpdef void _note_delivery(self, Message message, long long first_cut, long long order)
    cpdef long long _packet_cycles(self, Message message) except? RAISED
    @cython.locals(packets="long long", partition=Partition)
    cpdef long long _earliest_delivery(self, Message message, long long cycle) except? RAISED
    @cython.locals(deliveries=list, own=list, horizon="long long", message=Message, earliest="long long",
                   later="long long")
    cpdef long long _horizon(self, Partition partition, long long cycle) except? RAISED
    @cython.locals(units=tuple, cycle="long long", joined=list, i="long long", partition=Partition, merged=Partition)
    cpdef Partition _group(self, Message message)
    cpdef void _join(self, Partition partition, Message message, tuple units)
    @cython.locals(message=Message)
    cpdef void _absorb(self, Partition into, Partition other)
    cpdef void _end(self, Partition partition)
    cpdef void _leave(self, Partition partition, Message message)
    @cython.locals(groups=list, message=Message, units=tuple, group=Partition, other=Partition)
    cpdef list _regroup(self, Partition partition)
    @cython.locals(due=list, partition=Partition, group=Partition)
    cpdef void after_cycle(self, long long cycle)
    @cython.locals(sketch=list, message=Message, port=InputUnit, out=OutputUnit, injector=Injector,
                   receiver=Receiver)
    cpdef tuple _sketch(self, Partition partition, long long cycle)
    @cython.locals(period="long long", periods="long long", deltas=list)
    cpdef void _probe(self, Partition partition, long long cycle)


cpdef bint _delivered(Message message)
