"""Pure-Python twin of ``_fastsolve.c``: the same depth-first search and A*, move for move.

Used when the C extension is not built, and by the tests to check the C core.
Results are ``(result, moves|None, states, aborted)`` exactly as the C module
returns them: result 1 win, 0 no win, -1 budget ran out; aborted 1 time,
2 state limit, 3 memory.
"""

from __future__ import annotations

import heapq
import time
from typing import Optional

from companion.solver.position import F_STOCK_PLAYABLE, F_SW_PAIRS, F_TALON_KINGS, F_TUTS, K_DRAW, K_RECYCLE, K_REMOVE

RawMove = tuple[int, int, int]


class _Spec:
    def __init__(self, table_vals: bytes, covers: tuple[int, ...], talon_vals: bytes, goal: int,
                 draw: int, maxrec: int, flags: int, pair_sum: int) -> None:
        self.nt, self.nl = len(table_vals), len(talon_vals)
        self.val = list(table_vals) + list(talon_vals)
        n = len(self.val)
        self.cover = list(covers)
        self.goal, self.draw, self.maxrec, self.flags, self.pair_sum = goal, draw, maxrec, flags, pair_sum
        self.valmask = [0] * 16
        self.kings = 0
        for i, v in enumerate(self.val):
            self.valmask[v] |= 1 << i
            if v == pair_sum:
                self.kings |= 1 << i
        cone = list(self.cover)
        changed = True
        while changed:
            changed = False
            for i in range(self.nt):
                c = cone[i]
                for j in _bits(cone[i]):
                    c |= cone[j]
                if c != cone[i]:
                    cone[i], changed = c, True
        self.partners = [sum(1 << j for j in range(n) if j != i and self.val[i] + self.val[j] == pair_sum)
                         for i in range(n)]
        covering = 0
        for c in self.cover:
            covering |= c
        free = [i for i in range(self.nt) if not self.cover[i] and not (covering >> i) & 1]
        # interchangeable reserve cards: only the first one left of a value is offered
        self.twin_before = [0] * self.nt
        for i in free:
            for j in free:
                if j < i and self.val[j] == self.val[i] and (goal >> j) & 1 == (goal >> i) & 1:
                    self.twin_before[i] |= 1 << j
        self.block = [0] * n
        # a partner lying on i (in its cone) or under it never meets it; with the
        # Tut's Tomb quirk the directly touching cards still can
        for i in range(self.nt):
            under = sum(1 << j for j in range(self.nt) if (cone[j] >> i) & 1)
            direct = sum(1 << j for j in range(self.nt) if (self.cover[j] >> i) & 1)
            if flags & F_TUTS:
                self.block[i] = (cone[i] & ~self.cover[i]) | (under & ~direct)
            else:
                self.block[i] = cone[i] | under


def _bits(x: int):
    while x:
        low = x & -x
        yield low.bit_length() - 1
        x ^= low


def _normalize(s: _Spec, rm: int, ptr: int) -> int:
    while ptr < s.nl and (rm >> (s.nt + ptr)) & 1:
        ptr += 1
    return ptr


def _waste_top(s: _Spec, rm: int, ptr: int) -> int:
    for j in range(ptr - 1, -1, -1):
        if not (rm >> (s.nt + j)) & 1:
            return s.nt + j
    return -1


def _available(s: _Spec, rm: int) -> list[int]:
    return [i for i in range(s.nt)
            if not (rm >> i) & 1 and not s.cover[i] & ~rm and not s.twin_before[i] & ~rm]


def _dead(s: _Spec, rm: int) -> bool:
    for i in _bits(s.goal & ~rm & ~s.kings):
        if not s.partners[i] & ~rm & ~s.block[i]:
            return True
    return False


def _last_pass_dead(s: _Spec, rm: int, ptr: int, rec: int) -> bool:
    """In the last pass a needed waste card meets only table cards and cards still in the stock."""
    if s.maxrec < 0 or rec < s.maxrec or ptr == 0:
        return False
    waste = ((1 << ptr) - 1) << s.nt
    reach = ((1 << s.nt) - 1) | ((((1 << s.nl) - 1) << s.nt) & ~waste)
    for i in _bits(s.goal & ~rm & ~s.kings & waste):
        if not s.partners[i] & ~rm & reach:
            return True
    return False


def _last_pair(s: _Spec, rm: int, a: int, b: int) -> bool:
    va, vb = s.val[a], s.val[b]
    if va == vb:
        return bin(s.valmask[va] & ~rm).count("1") == 2
    return bin(s.valmask[va] & ~rm).count("1") == 1 and bin(s.valmask[vb] & ~rm).count("1") == 1


def _gen(s: _Spec, rm: int, ptr: int, rec: int, optimal: bool) -> list[RawMove]:
    val, ps = s.val, s.pair_sum
    av = _available(s, rm)
    w = _waste_top(s, rm, ptr)
    st = s.nt + ptr if ptr < s.nl and s.flags & F_STOCK_PLAYABLE else -1
    for i in av:
        if val[i] == ps and (not optimal or (s.goal >> i) & 1):
            return [(K_REMOVE, i, -1)]
    if not optimal and s.flags & F_TALON_KINGS:
        if w >= 0 and val[w] == ps:
            return [(K_REMOVE, w, -1)]
        if st >= 0 and val[st] == ps:
            return [(K_REMOVE, st, -1)]
    for x in range(len(av)):
        for y in range(x + 1, len(av)):
            a, b = av[x], av[y]
            if val[a] + val[b] == ps and _last_pair(s, rm, a, b) and (
                    not optimal or ((s.goal >> a) & 1 and (s.goal >> b) & 1)):
                return [(K_REMOVE, a, b)]
    out: list[RawMove] = []
    for x in range(len(av) - 1, -1, -1):
        for y in range(x - 1, -1, -1):
            if val[av[x]] + val[av[y]] == ps:
                out.append((K_REMOVE, av[y], av[x]))
    if s.flags & F_TUTS:
        for i in range(s.nt):
            if (rm >> i) & 1:
                continue
            c = s.cover[i] & ~rm
            if c and not c & (c - 1):
                x = c.bit_length() - 1
                if not s.cover[x] & ~rm and val[i] + val[x] == ps:
                    out.append((K_REMOVE, i, x))
    for x in range(len(av) - 1, -1, -1):
        if w >= 0 and val[av[x]] + val[w] == ps:
            out.append((K_REMOVE, av[x], w))
        if st >= 0 and val[av[x]] + val[st] == ps:
            out.append((K_REMOVE, av[x], st))
    if w >= 0 and st >= 0 and s.flags & F_SW_PAIRS and val[w] + val[st] == ps:
        out.append((K_REMOVE, w, st))
    if w >= 0 and val[w] == ps:
        out.append((K_REMOVE, w, -1))
    if st >= 0 and val[st] == ps:
        out.append((K_REMOVE, st, -1))
    if ptr < s.nl:
        out.append((K_DRAW, -1, -1))
    elif w >= 0 and (s.maxrec < 0 or rec < s.maxrec):
        out.append((K_RECYCLE, -1, -1))
    return out


def _apply(s: _Spec, m: RawMove, rm: int, ptr: int, rec: int) -> tuple[int, int, int]:
    kind, a, b = m
    if kind == K_REMOVE:
        rm |= 1 << a
        if b >= 0:
            rm |= 1 << b
        return rm, _normalize(s, rm, ptr), rec
    if kind == K_DRAW:
        p, c = ptr, 0
        while p < s.nl and c < s.draw:
            if not (rm >> (s.nt + p)) & 1:
                c += 1
            p += 1
        return rm, _normalize(s, rm, p), rec
    return rm, _normalize(s, rm, 0), rec + 1 if s.maxrec >= 0 else rec


class _Budget:
    def __init__(self, seconds: float, max_states: int) -> None:
        self.deadline = time.monotonic() + seconds
        self.max_states = max_states
        self.states = 0
        self.aborted = 0
        self.best, self.best_n = 0, -1  # the state that removed the most goal cards

    def over(self) -> bool:
        if self.max_states > 0 and self.states >= self.max_states:
            self.aborted = 2
            return True
        if self.states & 1023 == 0 and time.monotonic() > self.deadline:
            self.aborted = 1
            return True
        return False


def _talon_rest_ok(s: _Spec, c: tuple[int, ...]) -> bool:
    if not s.goal >> s.nt:
        return True
    for v in range(1, s.pair_sum):
        a, o = c[v], c[s.pair_sum - v]
        if (a & 1) if 2 * v == s.pair_sum else a != o:
            return False
    return not any(c[1:s.pair_sum]) or bool(s.flags & F_SW_PAIRS)


def _relax(s: _Spec, rm: int, memo: dict, b: _Budget) -> int:
    """Every talon card always at hand (each once): 1 feasible, 0 impossible, -1 budget.

    Every move removes a card (acyclic), so results are kept in ``memo`` for the whole solve."""
    counts = [0] * 16
    for j in range(s.nl):
        if not (rm >> (s.nt + j)) & 1:
            counts[s.val[s.nt + j]] += 1
    tgoal = s.goal & ((1 << s.nt) - 1)
    val, ps = s.val, s.pair_sum

    def rec(rm: int, c: tuple[int, ...]) -> int:
        if rm & tgoal == tgoal:
            return int(_talon_rest_ok(s, c))
        r = memo.get((rm, c))
        if r is not None:
            return r
        b.states += 1
        if b.over():
            return -1
        r = run(rm, c)
        if r >= 0:
            memo[(rm, c)] = r
        return r

    def run(rm: int, c: tuple[int, ...]) -> int:
        av = _available(s, rm)
        for i in av:
            if val[i] == ps:
                return rec(rm | 1 << i, c)
        for x in range(len(av) - 1, -1, -1):
            for y in range(x - 1, -1, -1):
                if val[av[x]] + val[av[y]] == ps:
                    r = rec(rm | 1 << av[x] | 1 << av[y], c)
                    if r:
                        return r
        if s.flags & F_TUTS:
            for i in range(s.nt):
                if (rm >> i) & 1:
                    continue
                cv = s.cover[i] & ~rm
                if cv and not cv & (cv - 1):
                    x = cv.bit_length() - 1
                    if not s.cover[x] & ~rm and val[i] + val[x] == ps:
                        r = rec(rm | 1 << i | 1 << x, c)
                        if r:
                            return r
        for x in range(len(av) - 1, -1, -1):
            v = ps - val[av[x]]
            if 1 <= v <= 13 and c[v]:
                c2 = list(c)
                c2[v] -= 1
                r = rec(rm | 1 << av[x], tuple(c2))
                if r:
                    return r
        return 0

    return rec(rm & ((1 << s.nt) - 1), tuple(counts))


def _dfs(s: _Spec, rm: int, ptr: int, rec: int, b: _Budget, memo: dict) -> tuple[int, Optional[list[RawMove]]]:
    seen: dict[int, int] = {}
    stack: list[list] = []  # [rm, ptr, rec, moves, i]
    ptr = _normalize(s, rm, ptr)
    pushing = True
    while True:
        if pushing:
            pushing = False
            if rm & s.goal == s.goal:
                return 1, [f[3][f[4] - 1] for f in stack]
            key = rm | (ptr << 52)
            old = seen.get(key)
            if old is None or old > rec:
                seen[key] = rec
                b.states += 1
                got = bin(rm & s.goal).count("1")
                if got > b.best_n:
                    b.best_n, b.best = got, rm
                if b.over():
                    return -1, None
                r = 0 if _dead(s, rm) or _last_pass_dead(s, rm, ptr, rec) else _relax(s, rm, memo, b)
                if r < 0:
                    return -1, None
                if r:
                    stack.append([rm, ptr, rec, _gen(s, rm, ptr, rec, False), 0])
        if not stack:
            return 0, None
        f = stack[-1]
        if f[4] >= len(f[3]):
            stack.pop()
            continue
        m = f[3][f[4]]
        f[4] += 1
        rm, ptr, rec = _apply(s, m, f[0], f[1], f[2])
        pushing = True


def _meets(s: _Spec, a: int, b: int) -> bool:
    return not (a < s.nt and (s.block[a] >> b) & 1) and not (b < s.nt and (s.block[b] >> a) & 1)


def _goal_pairs(s: _Spec, left: int, v: int) -> int:
    """Most goal-goal pairs of values v and pair_sum-v that can meet (maximum matching)."""
    w = s.pair_sum - v
    A = list(_bits(s.valmask[v] & left))[:4]
    if w == v:
        best = 0
        for i in range(len(A)):
            for j in range(i + 1, len(A)):
                if not _meets(s, A[i], A[j]):
                    continue
                rest = [A[t] for t in range(len(A)) if t not in (i, j)]
                two = len(rest) == 2 and _meets(s, rest[0], rest[1])
                best = max(best, 2 if two else 1)
        return best
    B = list(_bits(s.valmask[w] & left))[:4]
    owner = [-1] * len(B)

    def attempt(a: int, seen: set) -> bool:
        for b in range(len(B)):
            if b in seen or not _meets(s, A[a], B[b]):
                continue
            seen.add(b)
            if owner[b] < 0 or attempt(owner[b], seen):
                owner[b] = a
                return True
        return False

    return sum(1 for a in range(len(A)) if attempt(a, set()))


def _heuristic(s: _Spec, rm: int, ptr: int, rec: int) -> int:
    """Lower bound on the steps left (see ``heuristic`` in _fastsolve.c)."""
    left = s.goal & ~rm
    k = bin(left & s.kings).count("1")
    n = bin(left & ~s.kings).count("1")
    p = sum(_goal_pairs(s, left, v) for v in range(1, s.pair_sum // 2 + 1))
    h = k + n - p
    if s.goal >> s.nt:
        return h
    table = (1 << s.nt) - 1
    tgoal = left & table & ~s.kings
    pre = [0]
    for j in range(s.nl):
        slot = s.nt + j
        if (rm >> slot) & 1 or s.partners[slot] & tgoal & ~rm:
            c = 0
        elif s.flags & F_SW_PAIRS and s.val[slot] != s.pair_sum and s.partners[slot] & ~rm:
            c = 1
        else:
            c = 2
        pre.append(pre[-1] + c)
    can_recycle = s.maxrec < 0 or rec < s.maxrec
    playable = bool(s.flags & F_STOCK_PLAYABLE)
    extra = 0
    for x in _bits(tgoal):
        pr = s.partners[x] & ~rm
        if pr & table:
            continue
        best = None
        for slot in _bits(pr):
            j = slot - s.nt
            if j >= ptr:
                cost = (pre[j] - pre[ptr] + 1) // 2 + (0 if playable else 1)
            else:
                cost = (pre[ptr] - pre[j + 1] + 1) // 2
                if can_recycle:
                    cost = min(cost, (pre[s.nl] - pre[ptr] + pre[j] + 1) // 2 + 1 + (0 if playable else 1))
            best = cost if best is None else min(best, cost)
        if best is not None and best > extra:
            extra = best
    return h + extra


def _astar(s: _Spec, rm: int, ptr: int, rec: int, b: _Budget, memo: dict) -> tuple[int, Optional[list[RawMove]]]:
    ptr = _normalize(s, rm, ptr)
    key0 = rm | (ptr << 52) | (rec << 57)
    g_of: dict[int, int] = {key0: 0}
    parent: dict[int, tuple[int, RawMove]] = {}
    closed: set[int] = set()
    counter = 0  # LIFO among equal f, as the C bucket queue
    heap = [(_heuristic(s, rm, ptr, rec), 0, key0)]
    while heap:
        f, _, key = heapq.heappop(heap)
        if key in closed:
            continue
        rm, ptr, rec = key & ((1 << 52) - 1), (key >> 52) & 31, key >> 57
        g = g_of[key]
        if g + _heuristic(s, rm, ptr, rec) != f:
            continue
        closed.add(key)
        if rm & s.goal == s.goal:
            path = []
            while key in parent:
                key, m = parent[key]
                path.append(m)
            return 1, path[::-1]
        b.states += 1
        if b.over():
            return -1, None
        if _dead(s, rm) or _last_pass_dead(s, rm, ptr, rec):
            continue
        r = _relax(s, rm, memo, b)
        if r < 0:
            return -1, None
        if r == 0:
            continue
        for m in _gen(s, rm, ptr, rec, True):
            r2, p2, rec2 = _apply(s, m, rm, ptr, rec)
            k2 = r2 | (p2 << 52) | (rec2 << 57)
            # the same position with fewer recycles used, reached as fast, dominates
            if any(g_of.get(r2 | (p2 << 52) | (r << 57), 1 << 30) <= g + 1 for r in range(rec2)):
                continue
            if g_of.get(k2, 1 << 30) <= g + 1:
                continue
            closed.discard(k2)  # reopen: the bound is admissible, not always consistent
            g_of[k2] = g + 1
            parent[k2] = (key, m)
            counter -= 1
            heapq.heappush(heap, (g + 1 + _heuristic(s, r2, p2, rec2), counter, k2))
    return 0, None


def solve(table_vals: bytes, covers: tuple[int, ...], talon_vals: bytes, goal: int, removed: int,
          ptr: int, rec: int, maxrec: int, draw: int, flags: int, pair_sum: int,
          budget_seconds: float, max_states: int, optimal: int):
    s = _Spec(table_vals, covers, talon_vals, goal, draw, maxrec, flags, pair_sum)
    b = _Budget(budget_seconds, max_states)
    b.best = removed
    result, path = (_astar if optimal else _dfs)(s, removed, ptr, min(rec, 63), b, {})
    return result, path, b.states, b.aborted, b.best


def relax(table_vals: bytes, covers: tuple[int, ...], talon_vals: bytes, goal: int, removed: int,
          ptr: int, rec: int, maxrec: int, draw: int, flags: int, pair_sum: int,
          budget_seconds: float, max_states: int) -> int:
    s = _Spec(table_vals, covers, talon_vals, goal, draw, maxrec, flags, pair_sum)
    b = _Budget(budget_seconds, max_states)
    return 0 if _dead(s, removed) else _relax(s, removed, {}, b)
