"""Deadlock detection: find VCs whose flits cannot move and name a cycle of them waiting on each other.

A blocked VC waits on the downstream VC it needs credits from (or, for a head flit, on every VC
of its class at the next port, all held). A cycle in that wait-for graph is a deadlock.
"""

from __future__ import annotations

from netsim.errors import DeadlockError

MAX_NAMED = 8  # VCs named in a report before "..."


def vc_name(router, port, vc_index: int) -> str:
    return f"router {router.node} in-port {port.name} VC {vc_index}"


def wait_for_graph(routers, cycle: int) -> dict:
    """(router, port, vc) name -> names of the downstream VCs its ready front flit waits for."""
    graph: dict[str, list[str]] = {}
    for router in routers:
        for vc in router.active:
            if not vc.ready or vc.ready[0] > cycle:
                continue
            out = vc.out
            if out is None:
                out, lo, hi = vc.packets[0].route[router.node]
                wanted = range(lo, hi)
            else:
                wanted = (vc.out_vc,)
            if out.eject:
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


def deadlock_error(routers, cycle: int, stalled_cycles: int, flits_in_flight: int,
                   starved=None) -> DeadlockError:
    """The error to raise: a one-line report naming a cycle of waiting VCs (or the stuck VCs).
    `starved`: a router that has not moved for `stalled_cycles` while others have (None: no
    router has)."""
    graph = wait_for_graph(routers, cycle)
    loop = find_cycle(graph)
    if starved is None:
        head = (f"deadlock at cycle {cycle}: {flits_in_flight} flit(s) in flight, none moved for "
                f"{stalled_cycles} cycles; ")
    elif loop:
        head = (f"deadlock at cycle {cycle} (partial: other routers still move): router {starved.node} "
                f"has not sent a flit for {stalled_cycles} cycles; ")
    else:  # congestion so heavy that a router waits longer than deadlock_cycles for room downstream
        head = (f"no progress at cycle {cycle}: router {starved.node} has held ready flits without sending one "
                f"for {stalled_cycles} cycles while the rest of the network kept moving (starved by "
                f"congestion, or stuck; raise garnet.deadlock_cycles if this load is meant); ")
    if loop:
        names = loop if len(loop) <= MAX_NAMED + 1 else loop[:MAX_NAMED] + [f"... ({len(loop) - 1} VCs in all)"]
        return DeadlockError(head + "waiting cycle: " + " -> ".join(names))
    stuck = sorted(graph if starved is None else wait_for_graph([starved], cycle))
    return DeadlockError(head + "blocked VCs (no cycle found): " + "; ".join(stuck[:MAX_NAMED]))
