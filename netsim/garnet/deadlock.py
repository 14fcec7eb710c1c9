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


def deadlock_error(routers, cycle: int, stalled_cycles: int, flits_in_flight: int) -> DeadlockError:
    """The error to raise: a one-line report naming a cycle of waiting VCs (or the stuck VCs)."""
    graph = wait_for_graph(routers, cycle)
    loop = find_cycle(graph)
    head = (f"deadlock at cycle {cycle}: {flits_in_flight} flit(s) in flight, none moved for "
            f"{stalled_cycles} cycles; ")
    if loop:
        names = loop if len(loop) <= MAX_NAMED + 1 else loop[:MAX_NAMED] + [f"... ({len(loop) - 1} VCs in all)"]
        return DeadlockError(head + "waiting cycle: " + " -> ".join(names))
    stuck = sorted(graph)[:MAX_NAMED]
    return DeadlockError(head + "blocked VCs (no cycle found): " + "; ".join(stuck))
