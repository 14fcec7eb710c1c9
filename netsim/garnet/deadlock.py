"""Deadlock detection: find VCs whose flits cannot move and name a cycle of them waiting on each other.

A blocked VC waits on the downstream VC it needs credits from (or, for a head flit, on every VC
of its class at the next port). A cycle of such waits among VCs that have not moved for a long
time is a deadlock; VCs that wait long while the rest of the network keeps moving, with no such
cycle, are starved by congestion: a warning, not an error.
"""

from __future__ import annotations

from netsim.errors import DeadlockError

MAX_NAMED = 8  # VCs named in a report before "..."


def vc_name(router, port, vc_index: int) -> str:
    return f"router {router.node} in-port {port.name} VC {vc_index}"


def wait_for_graph(routers, cycle: int, since: int | None = None) -> dict:
    """(router, port, vc) name -> names of the downstream VCs its ready front flit waits for; with
    `since`, only front flits ready since that cycle or earlier (waiting at least that long)."""
    graph: dict[str, list[str]] = {}
    last = cycle if since is None else since
    for router in routers:
        output = router.allocator.routing.output
        for vc in router.occupied:
            if not vc.ready or vc.ready[0] > last:
                continue
            if vc.out_vc >= 0:
                out, wanted = vc.out, (vc.out_vc,)
            elif vc.out is not None:  # routed (a unit that chooses on the way is asked once per router)
                out, wanted = vc.out, range(vc.lo, vc.hi)
            else:
                out, lo, hi = output(router, vc.front)
                wanted = range(lo, hi)
            if out.ejects:
                continue
            graph[vc_name(router, vc.port, vc.index)] = [vc_name(out.dst_router, out.dst_port, v) for v in wanted]
    return graph


def find_cycle(graph: dict) -> list[str]:
    """One cycle of the wait-for graph (iterative DFS), or [] if there is none."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    for root in sorted(graph):
        if root in state:
            continue
        path, stack = [], [(root, iter(graph.get(root, ())))]
        state[root] = 1
        path.append(root)
        while stack:
            node, successors = stack[-1]
            advanced = False
            for nxt in successors:
                if state.get(nxt) == 1:
                    return path[path.index(nxt):] + [nxt]
                if nxt not in state and nxt in graph:
                    state[nxt] = 1
                    path.append(nxt)
                    stack.append((nxt, iter(graph[nxt])))
                    advanced = True
                    break
            if not advanced:
                state[node] = 2
                path.pop()
                stack.pop()
    return []


def waiting_cycle(routers, cycle: int, since: int) -> list[str]:
    """A cycle of VCs that have all waited since cycle `since` or earlier, each for the next ([] if
    none): a deadlock even if other routers still move. A head waits for any VC of its class, so
    it is stuck only if all of them are: VCs waiting on one that has not waited long are dropped
    until none is left (a knot), and the cycle is looked for among those that remain."""
    graph = wait_for_graph(routers, cycle, since)
    changed = True
    while changed:
        changed = False
        for name in list(graph):
            if any(wanted not in graph for wanted in graph[name]):
                del graph[name]
                changed = True
    return find_cycle(graph)


def _named(names: list[str]) -> str:
    return "; ".join(names[:MAX_NAMED]) + (f"; ... ({len(names)} in all)" if len(names) > MAX_NAMED else "")


def deadlock_error(routers, cycle: int, stalled_cycles: int, flits_in_flight: int, stuck=None,
                   loop: list[str] | None = None) -> DeadlockError:
    """The error to raise: a one-line report naming a cycle of waiting VCs (or the stuck VCs).
    `stuck` and `loop`: a router that has not moved for `stalled_cycles` while others have, and
    the waiting cycle found among long-waiting VCs (a partial deadlock)."""
    if loop:
        names = loop if len(loop) <= MAX_NAMED + 1 else loop[:MAX_NAMED] + [f"... ({len(loop) - 1} VCs in all)"]
        return DeadlockError(f"deadlock at cycle {cycle} (partial: other routers still move): router {stuck.node} "
                             f"has not sent a flit for {stalled_cycles} cycles; waiting cycle: " + " -> ".join(names))
    head = (f"deadlock at cycle {cycle}: {flits_in_flight} flit(s) in flight, none moved for "
            f"{stalled_cycles} cycles; ")
    graph = wait_for_graph(routers, cycle)
    found = find_cycle(graph)
    if found:
        names = found if len(found) <= MAX_NAMED + 1 else found[:MAX_NAMED] + [f"... ({len(found) - 1} VCs in all)"]
        return DeadlockError(head + "waiting cycle: " + " -> ".join(names))
    return DeadlockError(head + "blocked VCs (no cycle found): " + _named(sorted(graph)))


def starvation_warning(router, cycle: int) -> str:
    """One line on a router starved by congestion (its VCs waiting, the network moving)."""
    waiting = sorted(wait_for_graph([router], cycle))
    return (f"starvation at cycle {cycle}: router {router.node} has held ready flits without sending one for "
            f"{cycle - router.last_move} cycles while the rest of the network kept moving (congestion, not a "
            f"deadlock; the run goes on); waiting: {_named(waiting)}")
