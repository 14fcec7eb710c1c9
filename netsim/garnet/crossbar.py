"""Switch traversal: flits granted by a switch allocator cross the crossbar from their input VC onto
an output unit's link (Garnet's CrossbarSwitch with the link traversal that follows it).

A grant may move several consecutive flits of one packet at once, each at its own departure cycle
(an allocator grants that only when flit-by-flit allocation could not have decided otherwise), or
a whole packet in packet fidelity.
"""

from __future__ import annotations


def departures(ready, first: int, count: int, out, out_vc: int):
    """Cycles at which `count` flits leave through `out` into downstream VC `out_vc` if the first
    leaves at `first`: one every `cpf` cycles (the link's cycles per flit), later only where a flit
    is not ready yet (`ready`: their ready cycles, or None if all are) or its credit is not back
    yet (the credits are all on their way)."""
    spacing = out.cpf
    last = first + (count - 1) * spacing
    held = out.credits[out_vc]
    pending = out.pending[out_vc]
    if (ready is None or ready[count - 1] <= last) and (held >= count or pending[count - held - 1] <= last):
        return range(first, last + 1, spacing)  # back to back (the usual case; cycles increase)
    cycles = []
    depart = first
    for k in range(count):
        at = ready[k] if ready is not None else first
        if k >= held and pending[k - held] > at:
            at = pending[k - held]
        if at > depart:
            depart = at
        cycles.append(depart)
        depart += spacing
    return cycles


def traverse(router, vc, out, leaving) -> bool:
    """The next flits of `vc`'s front packet leave through `out` at the cycles `leaving`; returns
    True if the packet's tail was among them."""
    packet = vc.packets[0]
    head = vc.sent == 0
    tail = vc.sent + len(leaving) == packet.nflits
    out.send(packet, vc.out_vc, leaving, head, tail)
    vc.port.send_flits(vc, leaving)
    router.moved(leaving[-1])
    return tail
