"""The reference's search keys: 64 roots drawn from a second use of the MRG stream.

For candidate counter c = 0, 2, 4, ... the reference seeds the stream afresh,
skips ``2 * 2^128 + 2c`` steps and draws four values u1..u4. In double
arithmetic, ``d0 = u1*K1 + u2*K2``, ``d1 = u3*K1 + u4*K2`` (K1 = 1/(2^31-1),
K2 = 1/(2^31-1)^2 as the reference writes them) and the candidate is
``int64((d0 + d1) * N) mod N``. A candidate already chosen, or with no incident
edge other than self-loops, is skipped. When the counter passes ``2N`` the
search stops and the candidate in hand is taken as it is: on graphs with fewer
usable vertices than roots, the reference's keys are then repeated or
isolated, and `search_keys` reports that through ``complete``.

Candidates are drawn in batches (twice as many each time) by stepping the
skipped state by ``A^4`` (the counter moves by 2 and each unit is two draws)
in a Numba loop, and looked up a batch at a time, so even the degenerate
2N-candidate case is fast and several ranks ask each other a few times.
"""

import numba
import numpy as np

from graph500.generators import mrg

_K1 = 4.65661287524579692e-10
_K2 = 2.168404346990492787e-19


def incident_vertices(src, dst, num_vertices):
    """Boolean array: True for each vertex with an incident edge other than a self-loop."""
    has_edge = np.zeros(num_vertices, dtype=np.bool_)
    mark_incident(src, dst, has_edge)
    return has_edge


@numba.njit(cache=True)
def mark_incident(src, dst, has_edge):
    """Set ``has_edge`` for both endpoints of every tuple that is not a self-loop (chunk by chunk)."""
    for i in range(src.shape[0]):
        if src[i] != dst[i]:
            has_edge[src[i]] = True
            has_edge[dst[i]] = True


def search_keys(scale, seed1, seed2, has_edge, count=64):
    """The reference's ``count`` search keys for a graph of ``2^scale`` vertices.

    ``has_edge[candidates]``: for an int64 array of candidates, whether each
    has an edge other than a self-loop: `incident_vertices` of the graph (a
    bool array of all N vertices), or the ranks' `graph500.distributed.
    IncidentVertices` (collective: every rank asks the same candidates, a
    batch at a time). Returns ``(roots, complete)``: an int64 array of
    ``count`` roots and whether each was a fresh vertex with an edge (False
    when the reference's candidate counter ran out first).
    """
    num_vertices = 1 << scale
    state = mrg.skip(mrg.seed_state(seed1, seed2), 2 * 2**128)
    roots, chosen = [], set()
    counter, complete, batch = 0, True, 2 * count
    while len(roots) < count:
        candidates, state = _candidates(state, mrg.POWERS_OF_A[2], np.int64(num_vertices), batch)
        for candidate, incident in zip(candidates.tolist(), np.asarray(has_edge[candidates]).tolist()):
            counter += 2
            complete = complete and counter <= 2 * num_vertices
            if not complete or (incident and candidate not in chosen):  # past the counter: taken as it is
                roots.append(candidate)
                chosen.add(candidate)
                if len(roots) == count:
                    break
        batch *= 2  # few batches however many candidates are skipped
    return np.array(roots, dtype=np.int64), complete


@numba.njit(cache=True)
def _candidates(state, counter_step, num_vertices, count):
    """The next ``count`` candidates from ``state``, and the state after them."""
    candidates = np.empty(count, dtype=np.int64)
    for index in range(count):
        candidates[index] = _candidate(state, num_vertices)
        state = mrg.matvec_mod(counter_step, state)
    return candidates, state


@numba.njit(cache=True)
def _candidate(state, num_vertices):
    z1, z2, z3, z4, z5 = state[0], state[1], state[2], state[3], state[4]
    draws = np.empty(4, dtype=np.float64)
    for k in range(4):
        new = mrg.next_value(z1, z5)
        z5, z4, z3, z2, z1 = z4, z3, z2, z1, new
        draws[k] = np.float64(new)
    d0 = draws[0] * _K1 + draws[1] * _K2
    d1 = draws[2] * _K1 + draws[3] * _K2
    return np.int64((d0 + d1) * np.float64(num_vertices)) % num_vertices
