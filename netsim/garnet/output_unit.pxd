# Types of output_unit.py for the compiled core (Cython reads this beside the .py; see setup.py).

cimport cython
from netsim.garnet.clock cimport CycleClock
from netsim.garnet.router cimport Router
from netsim.garnet.input_unit cimport InputUnit
from netsim.garnet.crossbar cimport Slots
from netsim.garnet.packet cimport Packet
from netsim.garnet.cycle_queue cimport CycleQueue
from netsim.garnet.departures cimport Departures
from netsim.garnet.core cimport RAISED

cdef long long NEVER


@cython.final
cdef class OutputUnit:
    cdef public object owner
    cdef public CycleClock clock
    cdef public object name
    cdef public long long link_id, cpf, lat, latency, busy_until, index
    cdef public object receiver
    cdef public long long eject_credit_delay, credit_horizon
    cdef public Router dst_router
    cdef public InputUnit dst_port
    cdef public list dst_vcs
    cdef public long long delay, depth
    cdef public long long[::1] credits, in_use, tail_left
    cdef public list pending, last_sent
    cdef public bint release_on_sent
    cdef public long long next_vc
    cdef public bint waiting
    cdef public long long stall_since, stall, flits, bytes
    cdef public Slots slots
    cdef public long long lookahead

    @cython.locals(at="long long")
    cpdef long long next_free(self, long long cycle) except? RAISED
    @cython.locals(pending=CycleQueue, credits="long long", arrived="long long")
    cpdef long long absorb(self, long long vc, long long cycle) except? RAISED
    @cython.locals(pending=CycleQueue)
    cpdef long long usable(self, long long vc, long long cycle) except? RAISED
    cpdef bint is_free(self, long long vc, long long cycle) except? RAISED
    @cython.locals(best="long long", best_credits="long long", span="long long", start="long long", k="long long",
                   vc="long long", depth="long long", on_sent=bint, by="long long",
                   credits="long long")
    cpdef long long select_vc(self, long long lo, long long hi, long long cycle, long long room) except? RAISED
    cpdef void claim(self, long long vc) noexcept
    @cython.locals(earliest="long long", vc="long long", pending=CycleQueue, at="long long", index="long long")
    cpdef long long free_cycle(self, long long lo, long long hi, long long cycle, long long room,
                               long long unknown=*) except? RAISED
    @cython.locals(pending=CycleQueue, index="long long")
    cpdef long long credit_cycle(self, long long vc, long long cycle, long long count=*, long long unknown=*) except? RAISED
    cpdef void wait(self, long long cycle) noexcept
    @cython.locals(pending=CycleQueue)
    cpdef void credits_back(self, long long vc, Departures departures, long long delay)
    @cython.locals(count="long long", first="long long", last="long long", port=InputUnit, delay="long long",
                   pending=CycleQueue)
    cpdef void send(self, Packet packet, long long vc, Departures departures, bint head, bint tail)
    @cython.locals(ahead=double, cpf="long long", departures=Departures, k="long long", t="long long")
    cpdef double busy_after(self, double now)


@cython.locals(out=OutputUnit, link_bytes=list, busy=list)
cpdef tuple link_counters(list units, double now, CycleClock clock)
