"""Numba kernels of the coherent index (:mod:`viewer.index.rivals.coherent`): travel budgets on a frontier of an
implicit binary tree, a binary heap of due odometer readings, and the visible set kept across queries.

**Layout.** Slots ``0..nbuilt-1`` hold the build's objects by radius band, in Morton order within a band
(:func:`viewer.index.rivals.coherent.layout_order`; ``obj[s] = x, y, z, r``, float64,
world units); slots from ``nbuilt`` on are objects inserted later. Leaf ``j`` of the tree holds the slots
``[j * leaf, (j + 1) * leaf)``; ``P`` (a power of two) leaves under node 1; node ``k`` has children
``2k, 2k + 1``; a node whose slot range starts at or after ``nbuilt`` does not exist. ``nf[k]`` =
``lo x, y, z, hi x, y, z, rmin, rmax, due`` (float64: its members' centre box and radius range from the
build, and its due reading of the odometer); ``ni[k]`` = ``gen, state, epoch`` (int32). A node is on the
frontier (a cut of the tree) when ``ni[k, 0]`` is the current generation and its state is ``OUT`` (every
attached member out of reach), ``IN`` (every one in reach) or ``LEAF`` (a leaf whose members were each
tested); ``OPEN`` marks a node above the frontier. The box and radius range stay valid bounds of the
node's *attached* members forever: an object that moves or is inserted is *detached* (flag ``DET``) and
tested exactly once its own budget is spent: its slot in ``dlist[d]``, its current ``x, y, z, r`` and its due
reading in ``dkey[d]`` (side by side, so the pass over them reads in sequence, and the due readings alone
while nothing is due), ``d`` in ``obj[s, 0]``; a removed
one is ``DEAD``; neither is touched again by the tree. The visible list (``si[:nvis, 2]``) holds ids, so copying it out is a
sequential copy; ``si[s, 1]`` is a visible slot's position in it (swap-remove), ``si[s, 0]`` its id.

**Budgets and the odometer.** ``T`` is the camera's odometer (the sum of its step lengths, each rounded
up, and the sum rounded up: :func:`viewer.index.rivals.coherent.CoherentIndex`), so ``T_now - T_then`` is at
least the true distance travelled since then. A frontier node evaluated at reading ``T`` with budget ``b``
(world units) is due at ``below(T + b) <= nextafter(T + b, -inf) <= T + b`` (:func:`below`); until the
odometer reaches it, the camera is
less than ``b`` from where the node was looked at. Budgets:

- a leaf: the least over its attached live members of ``| |c - p| - r | - m(d, r)``;
- ``OUT``: ``dist(p, box) - rmax - m(dmax, rmax)``; ``IN``: ``rmin - maxdist(p, box) - m(dmax, rmax)``,

with ``m(d, r) = 32 * 2**-53 * (d + r) + 2**-500`` (``dmax`` the farthest distance from ``p`` to the box).

**Why a budget is conservative** (no member's float64 predicate ``(dx*dx + dy*dy) + dz*dz <= r*r`` changes
while the camera travels less than ``b``), with u = 2**-53. Each computed distance (a difference, three
squares, two sums, a square root) is within 6u of its true value relatively, plus 2**-536 absolutely for
underflow (coordinates and radii are at most 2**100 in the domain, so nothing overflows). The float64
predicate at a point where the true distance is d' agrees with the real ``d' <= r`` unless
``|d'^2 - r^2| <= 7u max(d', r)^2 + 2**-1072``, i.e. unless ``|d' - r| <= 7u max(d', r) + 2**-536``. While
the camera has travelled t < b <= |d - r|, d' is within t of d (triangle inequality), so the real
predicate keeps its value with room ``|d - r| - t``, and a member disagreeing with it would need
``max(d', r) <= 2 max(d, r)``-scale distances (a member far beyond ``2r`` is out by any rounding; one well
inside ``r`` is in). So ``|d - r| - t > 14u max(d, r) + 2**-536`` suffices; the computed slack is within
``6u (d + r)`` of the true one and the subtraction of the margin rounds once more: 32u (d + r) + 2**-500
covers all of it. For a box, a member's d lies between the box's distances, its r between ``rmin`` and
``rmax``; near the surface (the only place rounding matters) its ``max(d, r)`` is at most ``dmax + rmax``.
A budget of 0 (a surface point: d == r) makes the node due at the next query: it is tested every query,
and every decision is the exact predicate's.

**A detached object's own budget** (``dkey[d]``, an odometer reading): set at its test to
``below(T + b)`` with its slack ``b`` as for a leaf member, then lowered by every move by the
distance its centre moved plus the change of its radius, that sum times ``1 + 16u`` plus ``2**-500``, the
difference rounded down by at least an ulp (:func:`below`, in :func:`charge`); a new or removed row is due at once (``-inf``). ``| |c - p| - r |``
changes by at most the camera's travel plus the centre's travel plus the radius change (the triangle
inequality, each argument 1-Lipschitz), so while the odometer is below the reading the total is below ``b``
and the argument above holds as it is: the new ``max(d', r')`` is at most ``max(d, r) + b <= 2 max(d, r)``.
A pass over the detached rows then reads one float64 of a row not due and tests only the due ones.

Counters ``cnt`` (int64): see the ``C_*`` indices.
"""

from __future__ import annotations

import numpy as np
from numba.cpython.unsafe.numbers import leading_zeros

from viewer.kernels.jit import njit as njit_rc
from viewer.kernels.jit import njit_noref as njit
from viewer.kernels.jit import variant
from viewer.kernels.prefetch import prefetch

# node states (ni[k, 1])
OUT = 1
IN = 2
LEAF = 3
OPEN = 4
# slot flags
VIS = 1  # in the visible list
DET = 2  # detached from the tree (moved or inserted): a row of dobj with a budget of its own
DEAD = 4  # removed
OLD = 8  # visible before a rebuild (scratch of a rebuild)
ENT = 16  # entered in this query (scratch until the output copy)
# counters
C_NVIS = 0  # visible objects (length of the visible list of ids, si[:, 2])
C_ND = 1  # detached objects listed in dlist (dead ones dropped lazily)
C_NL = 2  # left events (slots in lft, ids after a query)
C_HS = 3  # heap entries
C_FRONT = 4  # frontier nodes
C_GEN = 5  # generation: ni[k, 0] != gen means "not on the frontier, not open"
C_TESTED = 6  # objects tested with the exact predicate in the last query
C_TRUE = 7  # ... of which in reach
C_NODES = 8  # nodes evaluated in the last query
C_DUE = 9  # due heap entries found in the last query
C_REBUILT = 10  # 1 when the last query rebuilt the frontier
C_NE = 11  # entered events of the last query
# the query's counters behind ``stats`` (a view of cnt[S_CAND:S_CAND + 4])
S_CAND = 12
S_VIS = 13
S_NODES = 14
S_LEVEL = 15
# the arenas' layout (see :func:`unpack`)
L_CAP = 16  # slots
L_NN = 17  # node rows (2P)
L_HCAP = 18  # heap entries
L_DCAP = 19  # detached list
L_LCAP = 20  # left events
L_ECAP = 21  # entered events
L_P = 22  # leaves under the root (a power of two)
L_LEAF = 23  # slots a leaf
L_NBUILT = 24  # slots under the tree
C_MIXED = 25  # 1 when the last leaf evaluated has members in reach and out (its parent cannot close)
C_WALK = 26  # 1 after a jump: no frontier; far steps walk the tree, a near one builds a new frontier
C_CHURN = 27  # 1 when the last query's events were more than a CHURN_DIV-th of its visible set: steps walk
N_COUNTERS = 32
HEAD = 8  # f64[0:HEAD]: odometer T, the last query point (x, y, z), 1 once there is one, (unused), the leaves'
# median reach (box diagonal + largest diameter: the scale of a far step), (unused)

EPS = 32.0 * 2.0**-53
TINY = 2.0**-500
STACK = 256  # evaluate's stack: 2 entries a level at most
SKIP = 16  # detached_pass: due readings looked for a block of this many at a time
NO_LIMIT = np.int64(1) << 62  # a query's due entries never make it walk (a short step)
#: a query whose entered + left events outnumber its visible set over CHURN_DIV (of at least CHURN_MIN objects)
#: makes the next step walk, short or long: where half the visible set changes every frame (the diagonal's
#: small spheres at a flight's speed) a walk finds it faster than the frontier's due nodes and events do
#: (measured in the README, "The coherent index")
CHURN_DIV = 4
CHURN_MIN = 64


@njit(inline="always")
def node_range(k, P, leaf, nbuilt):
    """Slots ``[lo, hi)`` of node ``k`` (``lo >= nbuilt``: the node does not exist)."""
    dep = 63 - leading_zeros(np.int64(k))  # floor(log2 k), one instruction (frexp was a libm call)
    span = (P >> dep) * leaf
    lo = (k - (1 << dep)) * span
    hi = min(lo + span, nbuilt)
    return lo, hi


@njit
def build_nodes(obj, nbuilt, P, leaf, nf, ni):
    """Boxes and radius ranges of every node (``nf`` (2P, 9)) from slots ``0..nbuilt-1``; clear ``ni``."""
    inf = np.inf
    for k in range(nf.shape[0]):
        nf[k, 0] = nf[k, 1] = nf[k, 2] = inf
        nf[k, 3] = nf[k, 4] = nf[k, 5] = -inf
        nf[k, 6] = inf
        nf[k, 7] = -inf
        nf[k, 8] = inf
        ni[k, 0] = -1
        ni[k, 1] = 0
        ni[k, 2] = 0
    for j in range(P):
        k = P + j
        lo = j * leaf
        hi = min(lo + leaf, nbuilt)
        for s in range(lo, hi):
            for a in range(3):
                v = obj[s, a]
                if v < nf[k, a]:
                    nf[k, a] = v
                if v > nf[k, 3 + a]:
                    nf[k, 3 + a] = v
            r = obj[s, 3]
            if r < nf[k, 6]:
                nf[k, 6] = r
            if r > nf[k, 7]:
                nf[k, 7] = r
    for k in range(P - 1, 0, -1):
        a_ = 2 * k
        b_ = a_ + 1
        for c in range(3):
            nf[k, c] = min(nf[a_, c], nf[b_, c])
            nf[k, 3 + c] = max(nf[a_, 3 + c], nf[b_, 3 + c])
        nf[k, 6] = min(nf[a_, 6], nf[b_, 6])
        nf[k, 7] = max(nf[a_, 7], nf[b_, 7])


@njit(inline="always")
def node_budgets(nf, k, px, py, pz):
    """``(out_budget, in_budget)`` of node ``k`` at the point (world units; > 0 means every attached member
    is out / in reach for that much more travel; see the module docstring for the margin)."""
    lx = nf[k, 0]
    ly = nf[k, 1]
    lz = nf[k, 2]
    hx = nf[k, 3]
    hy = nf[k, 4]
    hz = nf[k, 5]
    gx = max(lx - px, px - hx, 0.0)
    gy = max(ly - py, py - hy, 0.0)
    gz = max(lz - pz, pz - hz, 0.0)
    ax = max(abs(px - lx), abs(px - hx))
    ay = max(abs(py - ly), abs(py - hy))
    az = max(abs(pz - lz), abs(pz - hz))
    dmin = np.sqrt((gx * gx + gy * gy) + gz * gz)
    dmax = np.sqrt((ax * ax + ay * ay) + az * az)
    rmax = nf[k, 7]
    m = EPS * (dmax + rmax) + TINY
    return dmin - rmax - m, nf[k, 6] - dmax - m


@njit(inline="always")
def set_in(s, flags, si, cnt, ev):
    """Slot ``s`` into the visible list (its id appended; an entered event unless it was visible before a
    rebuild: recorded in ``ent`` while it has room, else flagged ``ENT`` for :func:`collect_entered`)."""
    f = flags[s]
    if f & VIS:
        return
    lft, ent, id2slot = ev
    nv = cnt[C_NVIS]
    i = si[s, 0]
    si[s, 1] = nv
    si[nv, 2] = i
    cnt[C_NVIS] = nv + 1
    if f & OLD:
        flags[s] = f | VIS
        return
    ne = cnt[C_NE]
    if ne < ent.shape[0]:
        ent[ne] = i
        flags[s] = f | VIS
    else:
        flags[s] = f | VIS | ENT
    cnt[C_NE] = ne + 1


@njit(inline="always")
def unlist(s, flags, si, cnt, id2slot):
    """Swap-remove slot ``s`` from the visible list (ids; ``id2slot`` finds the slot of the one moved)."""
    flags[s] = flags[s] & ~(VIS | ENT)
    nv = cnt[C_NVIS] - 1
    j = si[s, 1]
    last = si[nv, 2]
    si[j, 2] = last
    si[id2slot[last], 1] = j
    cnt[C_NVIS] = nv


@njit(inline="always")
def set_out(s, flags, si, cnt, ev):
    f = flags[s]
    if not (f & VIS):
        return
    lft, ent, id2slot = ev
    unlist(s, flags, si, cnt, id2slot)
    nl = cnt[C_NL]
    lft[nl] = si[s, 0]
    cnt[C_NL] = nl + 1


@njit
def flip_range(lo, hi, to_in, flags, si, cnt, ev):
    """Every attached live member of ``[lo, hi)`` in (``to_in``) or out of the visible set."""
    for s in range(lo, hi):
        if flags[s] & (DET | DEAD):
            continue
        if to_in:
            set_in(s, flags, si, cnt, ev)
        else:
            set_out(s, flags, si, cnt, ev)


@njit(inline="always")
def test_slot(obj, s, px, py, pz):
    """The contract's exact predicate for slot ``s`` and its slack budget (world units, may be < 0)."""
    dx = px - obj[s, 0]
    dy = py - obj[s, 1]
    dz = pz - obj[s, 2]
    r = obj[s, 3]
    d2 = (dx * dx + dy * dy) + dz * dz
    d = np.sqrt(d2)
    return d2 <= r * r, abs(d - r) - (EPS * (d + r) + TINY)


@njit
def leaf_eval(lo, hi, obj, flags, si, cnt, ev, px, py, pz):
    """Test every attached live member of a leaf exactly, update the visible set; returns the leaf's budget
    (inf when it has no attached live member). The loop branches only where a member's state changes (rare,
    well predicted), not on the predicate; ``cnt[C_MIXED]`` says whether the leaf has members in and out."""
    b = np.inf
    tested = 0
    hits = 0
    for s in range(lo, hi):
        f = flags[s]
        dx = px - obj[s, 0]
        dy = py - obj[s, 1]
        dz = pz - obj[s, 2]
        r = obj[s, 3]
        d2 = (dx * dx + dy * dy) + dz * dz
        d = np.sqrt(d2)
        inn = d2 <= r * r
        sl = abs(d - r) - (EPS * (d + r) + TINY)
        live = (f & (DET | DEAD)) == 0
        if not live:
            sl = np.inf
        b = min(b, sl)
        tested += live
        hits += live and inn
        if live and inn != ((f & VIS) != 0):
            if inn:
                set_in(s, flags, si, cnt, ev)
            else:
                set_out(s, flags, si, cnt, ev)
    cnt[C_TESTED] += tested
    cnt[C_TRUE] += hits
    cnt[C_MIXED] = 0 < hits < tested
    return b


@njit(inline="always")
def is_frontier(ni, k, gen):
    return ni[k, 0] == gen and 1 <= ni[k, 1] <= 3


@njit
def heap_push(hkey, hint, cnt, key, k, ep, ni):
    n = cnt[C_HS]
    if n == hkey.shape[0]:
        n = heap_compact(hkey, hint, n, ni, cnt[C_GEN])
    i = n
    while i > 0:
        p = (i - 1) >> 1
        if hkey[p] <= key:
            break
        hkey[i] = hkey[p]
        hint[i, 0] = hint[p, 0]
        hint[i, 1] = hint[p, 1]
        i = p
    hkey[i] = key
    hint[i, 0] = k
    hint[i, 1] = ep
    cnt[C_HS] = n + 1


@njit
def sift_down(hkey, hint, n, i):
    key = hkey[i]
    k = hint[i, 0]
    ep = hint[i, 1]
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and hkey[c + 1] < hkey[c]:
            c += 1
        if hkey[c] >= key:
            break
        hkey[i] = hkey[c]
        hint[i, 0] = hint[c, 0]
        hint[i, 1] = hint[c, 1]
        i = c
    hkey[i] = key
    hint[i, 0] = k
    hint[i, 1] = ep


@njit
def heap_compact(hkey, hint, n, ni, gen):
    """Drop stale entries (an epoch or generation that no longer matches), re-heapify; returns the size."""
    w = np.int64(0)  # not a literal 0: sift_down compiles once, for int64
    for i in range(n):
        k = hint[i, 0]
        if hint[i, 1] == ni[k, 2] and is_frontier(ni, k, gen):
            hkey[w] = hkey[i]
            hint[w, 0] = k
            hint[w, 1] = hint[i, 1]
            w += 1
    for i in range(w // 2 - 1, -1, -1):
        sift_down(hkey, hint, w, i)
    return w


@njit
def heap_pop(hkey, hint, cnt):
    n = cnt[C_HS] - 1
    k = hint[0, 0]
    ep = hint[0, 1]
    hkey[0] = hkey[n]
    hint[0, 0] = hint[n, 0]
    hint[0, 1] = hint[n, 1]
    cnt[C_HS] = n
    if n > 1:
        sift_down(hkey, hint, n, np.int64(0))  # int64, as heap_compact passes: compiled once
    return k, ep


@njit
def count_due(hkey, n, T, limit, stack):
    """Heap entries with key <= T, counting stops past ``limit`` (``stack``: scratch of >= limit + 2)."""
    if n == 0 or hkey[0] > T:
        return 0
    top = 1
    stack[0] = 0
    count = 0
    while top > 0:
        top -= 1
        i = stack[top]
        count += 1
        if count > limit:
            return count
        c = 2 * i + 1
        if c < n and hkey[c] <= T:
            stack[top] = c
            top += 1
        if c + 1 < n and hkey[c + 1] <= T:
            stack[top] = c + 1
            top += 1
    return count


@njit
def file_node(k, state, b, T, nf, ni, hkey, hint, cnt):
    """Put ``k`` on the frontier in ``state`` with budget ``b`` at odometer reading ``T``."""
    gen = cnt[C_GEN]
    if not is_frontier(ni, k, gen):
        cnt[C_FRONT] += 1
    ni[k, 0] = gen
    ni[k, 1] = state
    ep = ni[k, 2] + 1
    ni[k, 2] = ep
    if b < 0.0:
        b = 0.0
    if b == np.inf:
        nf[k, 8] = np.inf  # never due (no attached live member)
        return
    due = below(T + b)  # < T + b
    nf[k, 8] = due
    heap_push(hkey, hint, cnt, due, k, ep, ni)


@njit
def evaluate(k0, known0, obj, flags, si, nf, ni, hkey, hint, cnt, ev, stack, px, py, pz, T, P, leaf, nbuilt):
    """Re-bound node ``k0`` (its attached members' visible flags all ``known0``: ``OUT`` or ``IN``; ``LEAF``: each
    its own): file it again, flip its members, or open it into its children, recursively. A leaf's box is
    looked at before its members: all out (or all in) by the box, it is filed so without testing them (one
    node row instead of ``leaf`` objects; a new frontier after a jump tested 832 objects at the median on
    the bench's uniform-100k points, 352 so)."""
    gen = cnt[C_GEN]
    stack[0] = k0 * 4 + known0
    top = 1
    while top > 0:
        top -= 1
        k = stack[top] >> 2
        known = stack[top] & 3
        lo, hi = node_range(k, P, leaf, nbuilt)
        if lo >= hi:
            continue
        cnt[C_NODES] += 1
        bo, bi = node_budgets(nf, k, px, py, pz)
        if bo > 0.0:
            if known != OUT:
                flip_range(lo, hi, False, flags, si, cnt, ev)
            file_node(k, np.int64(OUT), bo, T, nf, ni, hkey, hint, cnt)  # int64 states: compiled once, as try_close's
        elif bi > 0.0:
            if known != IN:
                flip_range(lo, hi, True, flags, si, cnt, ev)
            file_node(k, np.int64(IN), bi, T, nf, ni, hkey, hint, cnt)
        elif k >= P:
            b = leaf_eval(lo, hi, obj, flags, si, cnt, ev, px, py, pz)
            file_node(k, np.int64(LEAF), b, T, nf, ni, hkey, hint, cnt)
        else:
            if is_frontier(ni, k, gen):
                cnt[C_FRONT] -= 1
            ni[k, 0] = gen
            ni[k, 1] = OPEN
            ni[k, 2] += 1
            stack[top] = (2 * k + 1) * 4 + known
            stack[top + 1] = (2 * k) * 4 + known
            top += 2


@njit
def try_close(k, nf, ni, hkey, hint, cnt, px, py, pz, T, P, leaf, nbuilt):
    """Close the open parents of frontier node ``k`` whose box is now all out / all in reach with a budget at
    least half of what their children have left: far regions come back to one node."""
    gen = cnt[C_GEN]
    c = k
    while c > 1:
        if not is_frontier(ni, c, gen) or not nf[c, 8] > T:
            return
        p = c >> 1
        if not (ni[p, 0] == gen and ni[p, 1] == OPEN):
            return
        s = c ^ 1
        lo, hi = node_range(s, P, leaf, nbuilt)
        sib = lo < hi
        rem = nf[c, 8]
        if sib:
            if not is_frontier(ni, s, gen) or ni[s, 1] == OPEN or not nf[s, 8] > T:
                return
            rem = min(rem, nf[s, 8])
        rem -= T
        bo, bi = node_budgets(nf, p, px, py, pz)
        if bo > 0.0:
            b = bo
            state = OUT
        elif bi > 0.0:
            b = bi
            state = IN
        else:
            return
        if b < 0.5 * rem:
            return
        ni[c, 1] = 0
        ni[c, 2] += 1
        cnt[C_FRONT] -= 1
        if sib:
            ni[s, 1] = 0
            ni[s, 2] += 1
            cnt[C_FRONT] -= 1
        file_node(p, state, b, T, nf, ni, hkey, hint, cnt)
        c = p


@njit
def detached_pass(obj, flags, si, dl, cnt, ev, px, py, pz, T):
    """Test the detached objects whose budget is spent exactly (after a rebuild or a walk too: their budgets
    are their own), each given a new budget at reading ``T`` (``dl = (dlist, dobj, dkey)``: their slots and their current
    ``x, y, z, r`` side by side and their due readings, read in sequence); drop dead ones from the list (a removed row
    is due at once). Branches only where a state changes."""
    dlist, dobj, dkey = dl
    nd = cnt[C_ND]
    i = 0
    tested = 0
    hits = 0
    while i < nd:
        if i + SKIP <= nd:
            # a block of readings none of which is due, skipped whole: its minimum is a vector reduction (a
            # moving world's many readings, a few dozen due: several times faster than a branch per reading)
            least = np.inf
            for j in range(i, i + SKIP):
                least = min(least, dkey[j])
            if least > T:
                i += SKIP
                continue
        if dkey[i] > T:
            i += 1
            continue
        s = dlist[i]
        f = flags[s]
        if f & DEAD:
            nd -= 1
            if i < nd:
                t = dlist[nd]
                dlist[i] = t
                for a in range(4):
                    dobj[i, a] = dobj[nd, a]
                dkey[i] = dkey[nd]
                obj[t, 0] = i
            continue
        dx = px - dobj[i, 0]
        dy = py - dobj[i, 1]
        dz = pz - dobj[i, 2]
        r = dobj[i, 3]
        d2 = (dx * dx + dy * dy) + dz * dz
        inn = d2 <= r * r
        d = np.sqrt(d2)
        dkey[i] = below(T + (abs(d - r) - (EPS * (d + r) + TINY)))
        tested += 1
        hits += inn
        if inn != ((f & VIS) != 0):
            if inn:
                set_in(s, flags, si, cnt, ev)
            else:
                set_out(s, flags, si, cnt, ev)
        i += 1
    cnt[C_ND] = nd
    cnt[C_TESTED] += tested
    cnt[C_TRUE] += hits


@njit(inline="always")
def forget_frontier(flags, si, cnt, ev):
    """Before a rebuild or a walk: the visible attached objects marked ``OLD`` (their ids kept as candidate
    left events after the pending ones, for :func:`finish_rebuild`) and taken off the visible list, and the
    frontier dropped. The visible detached ones stay listed: their own budgets do not depend on the frontier
    (a moving world's 100,000 movers are not all tested again). Returns ``(nl, m)``: the pending left events
    and the candidates (``lft[nl:nl + m]``; ``C_NL`` is past them, so a left event of the walk's own
    detached pass lands after them)."""
    lft, ent, id2slot = ev
    nv = cnt[C_NVIS]
    nl = cnt[C_NL]
    m = 0
    w = 0
    for j in range(nv):
        i = si[j, 2]
        s = id2slot[i]
        if flags[s] & DET:
            si[w, 2] = i
            si[s, 1] = w
            w += 1
        else:
            flags[s] = (flags[s] & ~VIS) | OLD
            lft[nl + m] = i
            m += 1
    cnt[C_NVIS] = w
    cnt[C_NL] = nl + m
    cnt[C_GEN] += 1
    cnt[C_HS] = 0
    cnt[C_FRONT] = 0
    return nl, m


@njit
def rebuild(obj, flags, si, nf, ni, hkey, hint, cnt, ev, stack, px, py, pz, T, P, leaf, nbuilt):
    """A new frontier from the root (a tree walk), the old visible objects marked ``OLD`` so that only real
    changes become events; the left ones are gathered after the detached pass (:func:`finish_rebuild`)."""
    nl, nv = forget_frontier(flags, si, cnt, ev)
    if nbuilt > 0:
        # the types query passes (a node int64, a state read from ni: int32): evaluate compiles once
        evaluate(np.int64(1), np.int32(OUT), obj, flags, si, nf, ni, hkey, hint, cnt, ev, stack, px, py, pz, T, P, leaf,
                 nbuilt)
    return nl, nv


@njit(inline="always")
def walk_node(nf, k, px, py, pz):
    """A walk's decision on node ``k``: 0 every attached member out of reach, 1 every one in, 2 open it. The
    same conditions as :func:`node_budgets` (``budget > 0``), each square root taken only where the squared
    distances leave the answer open (a node reaching the point cannot be all out; one not within ``rmin``
    of the point at its farthest cannot be all in)."""
    lx = nf[k, 0]
    ly = nf[k, 1]
    lz = nf[k, 2]
    hx = nf[k, 3]
    hy = nf[k, 4]
    hz = nf[k, 5]
    rmax = nf[k, 7]
    gx = max(lx - px, px - hx, 0.0)
    gy = max(ly - py, py - hy, 0.0)
    gz = max(lz - pz, pz - hz, 0.0)
    dmin2 = (gx * gx + gy * gy) + gz * gz
    ax = max(abs(px - lx), abs(px - hx))
    ay = max(abs(py - ly), abs(py - hy))
    az = max(abs(pz - lz), abs(pz - hz))
    dmax2 = (ax * ax + ay * ay) + az * az
    if dmin2 > rmax * rmax:
        dmax = np.sqrt(dmax2)
        if np.sqrt(dmin2) - rmax - (EPS * (dmax + rmax) + TINY) > 0.0:
            return 0
        return 2
    rmin = nf[k, 6]
    if dmax2 < rmin * rmin:
        dmax = np.sqrt(dmax2)
        if rmin - dmax - (EPS * (dmax + rmax) + TINY) > 0.0:
            return 1
    return 2


@njit
def walk_leaf(lo, hi, obj, flags, si, cnt, ev, px, py, pz):
    """A walk's exact test of a leaf's attached live members (no budgets: no square roots)."""
    tested = 0
    hits = 0
    for s in range(lo, hi):
        f = flags[s]
        dx = px - obj[s, 0]
        dy = py - obj[s, 1]
        dz = pz - obj[s, 2]
        r = obj[s, 3]
        inn = (dx * dx + dy * dy) + dz * dz <= r * r
        live = (f & (DET | DEAD)) == 0
        tested += live
        hits += live and inn
        if live and inn != ((f & VIS) != 0):
            if inn:
                set_in(s, flags, si, cnt, ev)
            else:
                set_out(s, flags, si, cnt, ev)
    cnt[C_TESTED] += tested
    cnt[C_TRUE] += hits


@njit
def walk(obj, flags, si, nf, ni, hkey, hint, cnt, ev, stack, px, py, pz, P, leaf, nbuilt):
    """A jump's answer without a frontier: the tree walked from the root like a BVH query (a node skipped when
    all out, its members flipped in when all in, a leaf's members tested exactly only when its own box leaves
    it open), the old visible objects marked
    ``OLD`` first (as :func:`rebuild` does), nothing filed; the frontier is dropped."""
    nl, nv = forget_frontier(flags, si, cnt, ev)
    if nbuilt == 0:
        return nl, nv
    stack[0] = 1
    top = 1
    while top > 0:
        top -= 1
        k = stack[top]
        lo, hi = node_range(k, P, leaf, nbuilt)
        if lo >= hi:
            continue
        cnt[C_NODES] += 1
        w = walk_node(nf, k, px, py, pz)
        if k >= P and w == 2:
            walk_leaf(lo, hi, obj, flags, si, cnt, ev, px, py, pz)
            continue
        if w == 0:
            continue
        if w == 1:
            flip_range(lo, hi, True, flags, si, cnt, ev)
            continue
        c = 2 * k
        # the children's rows (144 bytes), and a leaf child's first members, start loading now: a jump's walk
        # finds the tree cold
        prefetch(nf, c, 0)
        prefetch(nf, c + 1, 8)
        if c >= P:  # (a child past the last object still exists in the power-of-two tree: clamped)
            last = obj.shape[0] - 1
            prefetch(obj, min((c - P) * leaf, last), 0)
            prefetch(obj, min((c + 1 - P) * leaf, last), 0)
        stack[top] = c + 1
        stack[top + 1] = c
        top += 2
    return nl, nv


@njit
def finish_rebuild(flags, ev, cnt, nl, m):
    """After a rebuild or a walk: of the ``m`` candidates ``lft[nl:nl + m]`` (the old visible attached ids),
    the ones not visible now are left events, moved down over the others; then the detached pass's own
    left events (after the candidates) follow them. Clears ``OLD``."""
    lft, ent, id2slot = ev
    end = cnt[C_NL]
    w = nl
    for j in range(nl, nl + m):
        i = lft[j]
        s = id2slot[i]
        f = flags[s] & ~OLD
        flags[s] = f
        if not (f & VIS):
            lft[w] = i
            w += 1
    for j in range(nl + m, end):
        lft[w] = lft[j]
        w += 1
    cnt[C_NL] = w


@njit(inline="always")
def unpack(f64, i32, i64):
    """The views of the three arenas (numba unboxes each array argument on every call, a cost a short query
    feels for every array it passes: a query passes six). ``f64``: head (:data:`HEAD`), ``obj`` (cap, 4),
    ``nf`` (nn, 9), ``hkey`` (hcap,), ``dobj`` (dcap, 4), ``dkey`` (dcap,); ``i32``:
    ``si`` (cap, 3), ``ni`` (nn, 3), ``hint`` (hcap, 2), ``dlist`` (dcap,); ``i64``: ``cnt``
    (:data:`N_COUNTERS`, the sizes at ``L_*``), ``scratch`` (STACK + hcap + 2,), ``lft`` (lcap,), ``ent`` (ecap,)."""
    cap = i64[L_CAP]
    nn = i64[L_NN]
    hcap = i64[L_HCAP]
    dcap = i64[L_DCAP]
    lcap = i64[L_LCAP]
    ecap = i64[L_ECAP]
    o = HEAD
    obj = f64[o:o + 4 * cap].reshape((cap, 4))
    o += 4 * cap
    nf = f64[o:o + 9 * nn].reshape((nn, 9))
    o += 9 * nn
    hkey = f64[o:o + hcap]
    o += hcap
    dobj = f64[o:o + 4 * dcap].reshape((dcap, 4))
    o += 4 * dcap
    dkey = f64[o:o + dcap]
    o = 0
    si = i32[o:o + 3 * cap].reshape((cap, 3))
    o += 3 * cap
    ni = i32[o:o + 3 * nn].reshape((nn, 3))
    o += 3 * nn
    hint = i32[o:o + 2 * hcap].reshape((hcap, 2))
    o += 2 * hcap
    dlist = i32[o:o + dcap]
    cnt = i64[:N_COUNTERS]
    o = N_COUNTERS
    scratch = i64[o:o + STACK + hcap + 2]
    o += STACK + hcap + 2
    lft = i64[o:o + lcap]
    o += lcap
    ent = i64[o:o + ecap]
    return obj, nf, hkey, si, ni, hint, dlist, dobj, cnt, scratch, lft, ent, dkey


#: :func:`unpack` for Python (the arenas' views as numpy arrays): the kernels run without numba's reference
#: counting (:func:`viewer.kernels.jit.njit_noref`), and an array returned to Python needs it
unpack_views = njit_rc(variant(unpack.py_func, "views"))


@njit
def query_packed(f64, i32, i64, flags, id2slot, out, px, py, pz, jump_due, jump_scale, force, npend):
    """:func:`query` on the arenas: the odometer advanced by the step from the last point (its length
    rounded up: ``sqrt`` of the float64 sum times 1 + 16u plus 2**-500 bounds the true length; the sum
    rounded up by ``nextafter``), ``npend`` left ids already in ``lft`` (removed visible objects),
    ``id2slot`` the id table; ``force``: build a new frontier. Returns ``(visible, entered)`` counts and
    fills the stats counters.

    **Jumps.** A step is *far* when it is longer than ``jump_scale`` times the leaves' median reach (a
    leaf's box diagonal plus its largest sphere's diameter, ``f64[6]``). A far step with more than
    ``jump_due`` due heap entries walks the tree (a jump: filing nothing); after a walk, a far step walks
    again and a near one builds a new frontier. A near step walks only after churn (``cnt[C_CHURN]``: the
    last query's events outnumbered its visible set over :data:`CHURN_DIV`), however many entries are due:
    their cost is the work a flight needs, and a walk at a flight's speed costs as much again in a new
    frontier at the next step (measured in the README, "The coherent index")."""
    obj, nf, hkey, si, ni, hint, dlist, dobj, cnt, scratch, lft, ent, dkey = unpack(f64, i32, i64)
    T = f64[0]
    step = np.inf
    if f64[4] != 0.0:
        dx = px - f64[1]
        dy = py - f64[2]
        dz = pz - f64[3]
        step = np.sqrt((dx * dx + dy * dy) + dz * dz) * (1.0 + 16.0 * 2.0**-53) + TINY
        T = np.nextafter(T + step, np.inf)
    f64[0] = T
    f64[1] = px
    f64[2] = py
    f64[3] = pz
    f64[4] = 1.0
    cnt[C_NL] = npend
    cnt[C_NE] = 0
    far = step > jump_scale * f64[6]
    limit = jump_due if far else NO_LIMIT
    mode = 1 if force else 0  # 0: as the heap says, 1: a new frontier, 2: a walk
    if mode == 0 and cnt[C_WALK]:
        mode = 2 if far or cnt[C_CHURN] else 1
    elif mode == 0 and cnt[C_CHURN]:
        mode = 2
    nv = query(obj, flags, si, (dlist, dobj, dkey), nf, ni, hkey, hint, cnt, (lft, ent, id2slot), scratch, out,
               px, py, pz, T, cnt[L_P], cnt[L_LEAF], cnt[L_NBUILT], limit, mode)
    if cnt[C_REBUILT] == 2:
        cnt[C_WALK] = 1
    elif cnt[C_REBUILT] == 1:
        cnt[C_WALK] = 0
    cnt[C_CHURN] = nv >= CHURN_MIN and (cnt[C_NE] + cnt[C_NL]) * CHURN_DIV > nv
    cnt[S_CAND] = cnt[C_TESTED] + nv - cnt[C_TRUE]
    cnt[S_VIS] = nv
    cnt[S_NODES] = cnt[C_NODES]
    cnt[S_LEVEL] = 0
    return nv, cnt[C_NE]


@njit
def move_packed(ids, centres, radii, id2slot, f64, i32, i64, flags):
    """:func:`move_rows` on the arenas."""
    obj, nf, hkey, si, ni, hint, dlist, dobj, cnt, scratch, lft, ent, dkey = unpack(f64, i32, i64)
    move_rows(ids, centres, radii, id2slot, obj, flags, dlist, dobj, dkey, cnt)


@njit
def query(obj, flags, si, dl, nf, ni, hkey, hint, cnt, ev, scratch, out,
          px, py, pz, T, P, leaf, nbuilt, limit, mode):
    """One query at odometer reading ``T``: the due nodes re-bounded (``mode`` 0; past ``limit`` due entries, or
    with ``mode`` 2, a :func:`walk`; with ``mode`` 1 a rebuilt frontier: the old visible ones marked ``OLD``
    so only real changes are events; ``cnt[C_REBUILT]`` says which ran: 0, 1 or 2), the
    detached objects tested, the visible ids written into ``out`` (as
    many as fit), the entered ids into ``ent`` (as many as fit, the rest keep their ``ENT`` flag) and the
    left ones into ``lft[:cnt[C_NL]]`` (``ev = (lft, ent, id2slot)``). Returns the visible count."""
    cnt[C_TESTED] = 0
    cnt[C_TRUE] = 0
    cnt[C_NODES] = 0
    cnt[C_REBUILT] = 0
    stack = scratch[:STACK]
    due = scratch[STACK:]
    # the due entries are counted ahead only where their count may make a walk; else the pops count them
    n_due = count_due(hkey, cnt[C_HS], T, limit, due) if mode == 0 and limit < NO_LIMIT else 0
    cnt[C_DUE] = n_due
    if mode != 0 or n_due > limit:
        # a new frontier (the first query, after a layout, or a short step after a jump); too many due (a
        # jump): a walk that files nothing (C_REBUILT 2; the caller keeps walking until steps are short)
        if mode == 1:
            cnt[C_REBUILT] = 1
            nl, nv = rebuild(obj, flags, si, nf, ni, hkey, hint, cnt, ev, stack, px, py, pz, T, P, leaf, nbuilt)
        else:
            cnt[C_REBUILT] = 2
            nl, nv = walk(obj, flags, si, nf, ni, hkey, hint, cnt, ev, stack, px, py, pz, P, leaf, nbuilt)
        detached_pass(obj, flags, si, dl, cnt, ev, px, py, pz, T)
        finish_rebuild(flags, ev, cnt, nl, nv)
    else:
        gen = cnt[C_GEN]
        m = 0
        popped = 0
        while cnt[C_HS] > 0 and hkey[0] <= T:
            k, ep = heap_pop(hkey, hint, cnt)
            popped += 1
            if ep == ni[k, 2] and is_frontier(ni, k, gen):
                due[m] = k
                m += 1
        cnt[C_DUE] = popped  # every entry at or below T: what count_due counts
        for j in range(m):
            k = due[j]
            if not is_frontier(ni, k, gen):
                continue
            known = ni[k, 1]  # OUT or IN: every attached member so; LEAF: each its own
            cnt[C_MIXED] = 0
            evaluate(k, known, obj, flags, si, nf, ni, hkey, hint, cnt, ev, stack, px, py, pz, T, P, leaf, nbuilt)
            if not cnt[C_MIXED]:
                try_close(k, nf, ni, hkey, hint, cnt, px, py, pz, T, P, leaf, nbuilt)
        detached_pass(obj, flags, si, dl, cnt, ev, px, py, pz, T)
    return copy_out(si, cnt, out)


@njit
def copy_out(si, cnt, out):
    """The visible ids (the list holds ids: a sequential copy) into ``out``, as many as fit; returns the count."""
    nv = cnt[C_NVIS]
    m = min(nv, out.shape[0])
    for j in range(m):
        out[j] = si[j, 2]
    return nv


@njit
def collect_entered(flags, si, cnt, ent, start, id2slot):
    """The entered ids the query had no room for (flag ``ENT``), from ``ent[start]`` on (``ent`` now large
    enough); returns the end."""
    w = start
    for j in range(cnt[C_NVIS]):
        i = si[j, 2]
        s = id2slot[i]
        if flags[s] & ENT:
            flags[s] &= ~ENT
            ent[w] = i
            w += 1
    return w


@njit
def move_rows(ids, centres, radii, id2slot, obj, flags, dlist, dobj, dkey, cnt):
    """Write the movers' centres (and radii, NaN: keep) into their rows of ``dobj``, detaching each from the
    tree on its first move (``dlist`` / ``dobj`` have room): a detached slot's ``obj[s, 0]`` holds its row."""
    nd = cnt[C_ND]
    for j in range(ids.shape[0]):
        s = id2slot[ids[j]]
        f = flags[s]
        if f & DET:
            charge(dobj, dkey, np.int64(obj[s, 0]), centres, radii, j)
            continue
        d = nd
        nd += 1
        flags[s] = f | DET
        dlist[d] = s
        dobj[d, 3] = obj[s, 3]
        dkey[d] = -np.inf  # due at the next query
        obj[s, 0] = d
        dobj[d, 0] = centres[j, 0]
        dobj[d, 1] = centres[j, 1]
        dobj[d, 2] = centres[j, 2]
        r = radii[j]
        if r == r:
            dobj[d, 3] = r
    cnt[C_ND] = nd


@njit(inline="always")
def below(y):
    """A float64 at most ``nextafter(y, -inf)`` for ``y`` finite or -inf (an odometer reading is never +inf):
    ``(y - |y| 2**-52) - 2**-500``, without nextafter's call (a libm call: a third of :func:`charge`'s time,
    and a due reading is rounded down so at every filed node and every tested detached object). With
    ``|y|`` in ``[2**e, 2**(e+1))`` and ulp ``2**(e-52)`` (the spacing at ``|y|`` and above), ``|y| 2**-52``
    is exact and at least an ulp, so the true ``y - |y| 2**-52`` is at most the float ``f = y - ulp`` when
    ``y > 0`` and at most ``f = -(|y| + ulp)`` when ``y < 0``; rounding is monotone, so the computed value is
    at most ``f``, which is at most ``nextafter(y, -inf)``. The subtraction of ``2**-500`` rounds to at most
    its operand and covers ``y`` at or near 0 (where ``|y| 2**-52`` underflows); -inf stays -inf."""
    return (y - abs(y) * 2.0**-52) - TINY


@njit(inline="always")
def charge(dobj, dkey, d, centres, radii, j):
    """Row ``d`` moves to ``centres[j]`` (and ``radii[j]``, NaN: kept): its budget is lowered by the distance
    moved plus the radius change, rounded up (see the module docstring), and the row written."""
    dx = centres[j, 0] - dobj[d, 0]
    dy = centres[j, 1] - dobj[d, 1]
    dz = centres[j, 2] - dobj[d, 2]
    r = radii[j]
    dr = 0.0
    if r == r:
        dr = abs(r - dobj[d, 3])
        dobj[d, 3] = r
    dkey[d] = spend(dkey[d], (dx * dx + dy * dy) + dz * dz, dr)
    dobj[d, 0] = centres[j, 0]
    dobj[d, 1] = centres[j, 1]
    dobj[d, 2] = centres[j, 2]


@njit(inline="always")
def spend(key, d2, dr):
    """A due reading ``key`` lowered by a move of squared length ``d2`` and a radius change ``dr``: the
    spent travel ``sqrt(d2) + dr`` rounded up (see the module docstring), the difference rounded down."""
    spent = (np.sqrt(d2) + dr) * (1.0 + 16.0 * 2.0**-53) + TINY
    return below(key - spent)


#: rows :func:`charge_rows` takes per block: its first pass writes their squared moves and radius changes into
#: a scratch of 2 x CHARGE_BLOCK float64 (32 KiB, in L2), so that its second pass, the square roots and the
#: budgets over contiguous arrays, runs in SIMD lanes (rows in cache charged in about half the time, with radii
#: kept or new; one pass row by row never vectorised). In a frame of dynamic-1m the rows come from memory and it
#: is no faster; a world whose rows stay in cache (dynamic-100k) updates faster
CHARGE_BLOCK = 2048


@njit
def _spend_block(dkey, d2, dr, m):
    """``dkey[k]`` lowered by :func:`spend` with ``d2[k]``, ``dr[k]`` for k < m (a loop LLVM vectorises: its
    indices are the loop's own, never negative, so no wraparound select)."""
    for k in range(m):
        dkey[k] = spend(dkey[k], d2[k], dr[k])


@njit
def _move_block(centres, radii, dobj, d2, dr, m):
    """Rows ``dobj[k]`` moved to ``centres[k]`` (and ``radii[k]``, NaN: kept) for k < m, their squared moves
    into ``d2[k]`` and radius changes into ``dr[k]`` (indices the loop's own, as in :func:`_spend_block`)."""
    for k in range(m):
        x = centres[k, 0]
        y = centres[k, 1]
        z = centres[k, 2]
        dx = x - dobj[k, 0]
        dy = y - dobj[k, 1]
        dz = z - dobj[k, 2]
        d2[k] = (dx * dx + dy * dy) + dz * dz
        r = radii[k]
        dr[k] = 0.0
        if r == r:
            dr[k] = abs(r - dobj[k, 3])
            dobj[k, 3] = r
        dobj[k, 0] = x
        dobj[k, 1] = y
        dobj[k, 2] = z


@njit
def charge_rows(rows, start, centres, radii, dobj, dkey, tmp):
    """A batch of moves of detached objects whose rows are known: ``rows`` (M,) int64, or when empty the
    rows ``start .. start + M - 1``; each row charged and written as by :func:`charge`. Contiguous rows go in
    blocks of ``B = tmp.shape[1]`` (``tmp`` (2, B) float64 scratch, :data:`CHARGE_BLOCK`): their moves first
    (rows written, squared lengths and radius changes kept), then their budgets in one vectorised pass; the
    arithmetic is :func:`charge`'s, so is the bound."""
    m = centres.shape[0]
    if rows.shape[0] == 0:
        d2 = tmp[0]
        drs = tmp[1]
        B = tmp.shape[1]
        for b0 in range(0, m, B):
            nb = min(m - b0, B)
            _move_block(centres[b0:], radii[b0:], dobj[start + b0:], d2, drs, nb)
            _spend_block(dkey[start + b0:], d2, drs, nb)
    else:
        for j in range(m):
            charge(dobj, dkey, rows[j], centres, radii, j)


@njit
def drop_visible(s, flags, si, cnt, id2slot):
    """Take a removed slot out of the visible list (no event here: the caller records it)."""
    if not (flags[s] & VIS):
        return False
    unlist(s, flags, si, cnt, id2slot)
    return True


@njit(inline="always")
def _keep(i, id2slot, obj, dobj, flags, px, py, pz, margin, relative):
    """:class:`viewer.frame.events.VisibilityTracker`'s rule for an object in the in-set and not visible: it
    stays while ``d2 <= big * big``, ``big = r (1 + margin)`` (``relative``) or ``r + margin``, in the same
    float64 operations as the tracker's kernel (so the same answer); a removed object (``id2slot`` -1) leaves."""
    s = id2slot[i]
    if s < 0 or not margin > 0.0:
        return False
    if flags[s] & DET:
        d = np.int64(obj[s, 0])
        cx = dobj[d, 0]
        cy = dobj[d, 1]
        cz = dobj[d, 2]
        r = dobj[d, 3]
    else:
        cx = obj[s, 0]
        cy = obj[s, 1]
        cz = obj[s, 2]
        r = obj[s, 3]
    dx = px - cx
    dy = py - cy
    dz = pz - cz
    big = r * (1.0 + margin) if relative else r + margin
    d2 = (dx * dx + dy * dy) + dz * dz
    return d2 <= big * big


@njit
def margin_events(ent, ne, lft, nl, hl, nh, hflag, id2slot, f64, i32, i64, flags, px, py, pz, margin, relative,
                  ient, ileft):
    """The in-set's events (hysteresis) from the visible set's: the in-set is the visible set plus the
    *held* objects ``hl[:nh]`` (ids, ``hflag[id]`` 1), in and no longer visible. Exact: the visible set is
    exact and each held object is tested with the tracker's own rule (:func:`_keep`) on every query.

    ent[:ne], lft[:nl] : int64 ids, the visible set's entered / left events of this query
    hl : int64 ids (room for nh + nl), rewritten in place; hflag : (ids,) uint8
    ient, ileft : out buffers (room for ne, and nh + nl): the in-set's entered / left ids

    Returns ``(entered, left, held)`` counts."""
    obj, nf, hkey, si, ni, hint, dlist, dobj, cnt, scratch, lft_, ent_, dkey = unpack(f64, i32, i64)
    nie = 0
    for j in range(ne):  # visible now: an entered event unless it was held (in already)
        i = ent[j]
        if hflag[i]:
            hflag[i] = 0
        else:
            ient[nie] = i
            nie += 1
    w = 0
    nil = 0
    for j in range(nh):  # held before: visible again (dropped above), kept, or left
        i = hl[j]
        if not hflag[i]:
            continue
        if _keep(i, id2slot, obj, dobj, flags, px, py, pz, margin, relative):
            hl[w] = i
            w += 1
        else:
            hflag[i] = 0
            ileft[nil] = i
            nil += 1
    for j in range(nl):  # left the visible set now: held while within the margin, else left
        i = lft[j]
        if _keep(i, id2slot, obj, dobj, flags, px, py, pz, margin, relative):
            hflag[i] = 1
            hl[w] = i
            w += 1
        else:
            ileft[nil] = i
            nil += 1
    return nie, nil, w
