"""The game state: one immutable, hashable position of a Pyramid game.

Internals are small integers and tuples so that ``legal_moves`` and ``apply``
stay cheap (the solver's generic path calls them millions of times):

* ``_empty``  bitmask of pyramid slots that no longer hold a card
* ``_exp``    bitmask of occupied slots no card covers (kept up to date)
* ``_stock``  stock *positions* (indexes into the deal's stock), next first
* ``_waste``  one tuple of stock positions per waste pile, bottom..top
* ``_cells``  cards in free cells (sorted by card index: cells are a set)
* ``_res``    bitmask of reserve cards gone (removed or moved to a cell)
* ``_gone``   bitmask of removed cards (``Card.index``)

Stock and waste hold positions, not cards: the stock and waste always keep the
deal's relative order (a recycle turns the waste back in drawing order), so a
recycle is ``sorted`` even for three waste piles, and an unknown card (``??``)
keeps its place until ``reveal`` names it. What is known about the deal lives
in a shared ``_Known`` object that only ``reveal`` replaces.
"""

from __future__ import annotations

import random
from typing import Iterator, Optional

from companion.cards import Card
from companion.errors import IllegalMoveError
from companion.game.context import Context, Known, context_for
from companion.game.deal import Deal
from companion.moves import DRAW, RECYCLE, TO_CELL, Move
from companion.rules import WIN_ALL, Rules

WON, LOST, PLAYING = "won", "lost", "playing"

# Source codes of available cards (see ``GameState._sources``).
PYR, STOCK, WASTE, CELL, RES = 0, 1, 2, 3, 4


class GameState:
    """A position. Build with :meth:`initial`; every move returns a new state."""

    __slots__ = ("_ctx", "_k", "_empty", "_exp", "_stock", "_waste", "_cells", "_res", "_gone",
                 "_recycles", "_cleared_pass", "_key", "_moves", "_result")

    # --- construction -----------------------------------------------------------------
    @classmethod
    def initial(cls, rules: Rules, deal: Deal) -> "GameState":
        ctx = context_for(rules)
        known = Known.from_deal(ctx, deal)
        n_piles = rules.waste_piles
        return cls._make(ctx, known, 0, ctx.geo.exposed_mask(0), tuple(range(rules.stock_size)),
                         ((),) * n_piles, (), 0, 0, 0, 0)

    @classmethod
    def _make(cls, ctx: Context, k: Known, empty: int, exp: int, stock: tuple[int, ...],
              waste: tuple[tuple[int, ...], ...], cells: tuple[Card, ...], res: int, gone: int,
              recycles: int, cleared_pass: int) -> "GameState":
        self = object.__new__(cls)
        self._ctx = ctx
        self._k = k
        self._empty = empty
        self._exp = exp
        self._stock = stock
        self._waste = waste
        self._cells = cells
        self._res = res
        self._gone = gone
        self._recycles = recycles
        self._cleared_pass = cleared_pass
        self._key = None
        self._moves = None
        self._result = None
        return self

    def _replace(self, **kw: object) -> "GameState":
        new = GameState._make(self._ctx, self._k, self._empty, self._exp, self._stock, self._waste,
                              self._cells, self._res, self._gone, self._recycles, self._cleared_pass)
        for name, value in kw.items():
            setattr(new, "_" + name, value)
        return new

    # --- public views -------------------------------------------------------------------
    @property
    def rules(self) -> Rules:
        return self._ctx.rules

    @property
    def deal(self) -> Deal:
        """The deal as known now (reveals included)."""
        return self._k.deal

    @property
    def pyramid(self) -> tuple[Optional[Card], ...]:
        """Flat, row-major from the 1-card row; ``None`` where the slot is empty (or unknown)."""
        e, p = self._empty, self._k.pyramid
        return tuple(None if (e >> s) & 1 else p[s] for s in range(len(p)))

    @property
    def empty_mask(self) -> int:
        """Bitmask of pyramid slots that no longer hold a card."""
        return self._empty

    @property
    def exposed_mask(self) -> int:
        """Bitmask of pyramid slots holding a card that no other card covers."""
        return self._exp

    def slot_empty(self, slot: int) -> bool:
        return bool((self._empty >> slot) & 1)

    def visible(self, slot: int) -> bool:
        """Whether a player at the table sees the card of ``slot`` (face up, still there)."""
        if (self._empty >> slot) & 1:
            return False
        return slot not in self._ctx.face_down or bool((self._exp >> slot) & 1)

    @property
    def stock(self) -> tuple[Optional[Card], ...]:
        sc = self._k.stock
        return tuple(sc[p] for p in self._stock)

    @property
    def waste(self) -> tuple[tuple[Optional[Card], ...], ...]:
        sc = self._k.stock
        return tuple(tuple(sc[p] for p in pile) for pile in self._waste)

    @property
    def cells(self) -> tuple[Optional[Card], ...]:
        """One entry per free cell (``None`` = empty), filled cells first."""
        return self._cells + (None,) * (self._ctx.free_cells - len(self._cells))

    @property
    def reserve(self) -> tuple[Optional[Card], ...]:
        r = self._res
        return tuple(None if (r >> i) & 1 else c for i, c in enumerate(self._k.reserve))

    @property
    def reserve_piles(self) -> tuple[tuple[Card, ...], ...]:
        """The reserve as piles, bottom..top (one card per pile unless the rules stack them)."""
        n = self._ctx.rules.reserve_piles or len(self._k.reserve)
        cards = self.reserve
        return tuple(tuple(c for c in cards[p::n] if c is not None) for p in range(n))

    @property
    def removed(self) -> frozenset[Card]:
        return self._ctx.cards_of_mask(self._gone)

    @property
    def removed_mask(self) -> int:
        """Bitmask of removed cards by ``Card.index``."""
        return self._gone

    @property
    def pass_number(self) -> int:
        return self._recycles + 1

    @property
    def recycles_left(self) -> Optional[int]:
        limit = self._ctx.recycles
        return None if limit is None else limit - self._recycles

    @property
    def cleared_pass(self) -> int:
        """Pass in which the pyramid was cleared (0 while it is not)."""
        return self._cleared_pass

    def cards_left(self) -> int:
        """Cards not removed yet (pyramid, stock, waste, cells, reserve)."""
        return self._ctx.deck_size - self._gone.bit_count()

    # --- availability ---------------------------------------------------------------------
    def _sources(self) -> list[tuple[Card, int]]:
        """Known cards that can be played now, with their source code."""
        ctx, k = self._ctx, self._k
        out: list[tuple[Card, int]] = []
        pyr = k.pyramid
        m = self._exp
        while m:
            low = m & -m
            c = pyr[low.bit_length() - 1]
            if c is not None:
                out.append((c, PYR))
            m ^= low
        sc = k.stock
        if ctx.stock_playable and self._stock:
            c = sc[self._stock[0]]
            if c is not None:
                out.append((c, STOCK))
        for pile in self._waste:
            if pile:
                c = sc[pile[-1]]
                if c is not None:
                    out.append((c, WASTE))
        for c in self._cells:
            out.append((c, CELL))
        if k.reserve:
            r = self._res
            above = ctx.reserve_above
            for i, c in enumerate(k.reserve):
                if not (r >> i) & 1 and not above[i] & ~r:
                    out.append((c, RES))
        return out

    def available(self) -> frozenset[Card]:
        """Cards playable now: exposed pyramid, stock top if playable, waste tops, cells, reserve."""
        return frozenset(c for c, _ in self._sources())

    # --- moves ---------------------------------------------------------------------------
    def legal_moves(self) -> list[Move]:
        moves = self._moves
        if moves is None:
            moves = self._generate()
            self._moves = moves
        return list(moves)

    def _generate(self) -> tuple[Move, ...]:
        ctx = self._ctx
        if self.is_won():
            return ()
        src = self._sources()
        val = ctx.value
        target = ctx.pair_sum
        king_move, pair_moves, free = ctx.king_move, ctx.pair_moves, ctx.free_pairs
        out: list[Move] = []
        seen: dict[int, list[tuple[Card, int]]] = {}
        for a, sa in src:
            ia = a.index
            va = val[ia]
            if va == target:
                out.append(king_move[ia])
                continue
            partners = seen.get(target - va)
            if partners:
                row = pair_moves[ia]
                for b, sb in partners:
                    if sa == PYR or sb == PYR or free:
                        out.append(row[b.index])
            bucket = seen.get(va)
            if bucket is None:
                seen[va] = [(a, sa)]
            else:
                bucket.append((a, sa))
        if ctx.tuts_tomb:
            out.extend(self._tuts_pairs())
        if len(self._cells) < ctx.free_cells:
            cell_move = ctx.cell_move
            out.extend(cell_move[c.index] for c, s in src if s != CELL)
        if self._stock:
            out.append(ctx.draw_move)
        elif self._can_recycle():
            out.append(ctx.recycle_move)
        return tuple(out)

    def _tuts_pairs(self) -> Iterator[Move]:
        """Pairs of a card with the one card that alone still covers it."""
        ctx, geo, pyr = self._ctx, self._ctx.geo, self._k.pyramid
        e, exp = self._empty, self._exp
        for t in ctx.tuts_candidates(exp):
            # t is exposed; each slot s that t covers and that nothing else covers pairs with t
            for s in geo.covered_by(t):
                if (e >> s) & 1 or s in ctx.face_down:  # a face-down card cannot be seen to pair
                    continue
                if geo.cover_masks[s] & ~e == 1 << t:
                    a, b = pyr[t], pyr[s]
                    if a is not None and b is not None and ctx.pairs_idx(a.index, b.index):
                        yield ctx.pair_move(a, b)

    def _can_recycle(self) -> bool:
        if self._stock or not any(self._waste):
            return False
        limit = self._ctx.recycles
        return limit is None or self._recycles < limit

    def apply(self, move: Move | str) -> "GameState":
        """The state after ``move``; :class:`IllegalMoveError` with a readable reason otherwise."""
        if isinstance(move, str):
            move = Move.parse(move)
        moves = self._moves
        if moves is not None and move not in moves:
            raise IllegalMoveError(self._reason(move))
        new = self._play(move)
        if new is None:
            raise IllegalMoveError(self._reason(move))
        return new

    def why_illegal(self, move: Move | str) -> Optional[str]:
        """``None`` when ``move`` is legal, else the reason a person can read."""
        if isinstance(move, str):
            move = Move.parse(move)
        if move in self.legal_moves():
            return None
        return self._reason(move)

    def is_legal(self, move: Move | str) -> bool:
        return self.why_illegal(move) is None

    def _reason(self, move: Move) -> str:
        from companion.game.reasons import reason
        return reason(self, move)

    def _play(self, move: Move) -> Optional["GameState"]:
        """Apply without building the move list; ``None`` when illegal."""
        ctx = self._ctx
        if self.is_won():
            return None
        kind = move.kind
        if kind == DRAW:
            return self._draw()
        if kind == RECYCLE:
            if not self._can_recycle():
                return None
            stock = tuple(sorted(p for pile in self._waste for p in pile))
            return self._replace(stock=stock, waste=((),) * ctx.waste_piles, recycles=self._recycles + 1)
        cards = move.cards
        locate = self._locate_available
        if kind == TO_CELL:
            if len(self._cells) >= ctx.free_cells:
                return None
            card = cards[0]
            where = locate(card)
            if where is None or where[0] == CELL:
                return None
            f = [self._empty, self._exp, self._stock, self._waste, self._cells, self._res]
            self._lift(f, card, where)
            f[4] = tuple(sorted(f[4] + (card,), key=_index))
            return self._build(f, self._gone)
        # removal
        if len(cards) == 1:
            card = cards[0]
            if ctx.value[card.index] != ctx.pair_sum:
                return None
            where = locate(card)
            if where is None:
                return None
            f = [self._empty, self._exp, self._stock, self._waste, self._cells, self._res]
            self._lift(f, card, where)
            return self._build(f, self._gone | (1 << card.index))
        a, b = cards
        if not ctx.pairs_idx(a.index, b.index):
            return None
        wa, wb = locate(a), locate(b)
        if wa is None or wb is None:
            if not (ctx.tuts_tomb and self._is_tuts_pair(a, b)):
                return None
            wa, wb = (PYR, self._k.slot_of[a]), (PYR, self._k.slot_of[b])
        elif wa[0] != PYR and wb[0] != PYR and not ctx.free_pairs:
            return None
        f = [self._empty, self._exp, self._stock, self._waste, self._cells, self._res]
        self._lift(f, a, wa)
        self._lift(f, b, wb)
        return self._build(f, self._gone | (1 << a.index) | (1 << b.index))

    def _build(self, f: list, gone: int) -> "GameState":
        new = GameState._make(self._ctx, self._k, f[0], f[1], f[2], f[3], f[4], f[5], gone,
                              self._recycles, self._cleared_pass)
        if not self._cleared_pass and f[0] == self._ctx.geo.full and new._pyramid_cleared():
            new._cleared_pass = self._recycles + 1
        return new

    def _lift(self, f: list, card: Card, where: tuple[int, int]) -> None:
        """Take ``card`` off its place ``where`` in the field list ``f`` (see ``_play``)."""
        src, i = where
        if src == PYR:
            geo = self._ctx.geo
            empty = f[0] | (1 << i)
            exp = f[1] & ~(1 << i)
            cm = geo.cover_masks
            for s in geo.covered_by(i):
                if not (empty >> s) & 1 and cm[s] & ~empty == 0:
                    exp |= 1 << s
            f[0], f[1] = empty, exp
        elif src == STOCK:
            f[2] = f[2][1:]
        elif src == WASTE:
            waste = list(f[3])
            waste[i] = waste[i][:-1]
            f[3] = tuple(waste)
        elif src == CELL:
            f[4] = tuple(c for c in f[4] if c is not card)
        else:
            f[5] |= 1 << i

    def _is_tuts_pair(self, a: Card, b: Card) -> bool:
        slot_of = self._k.slot_of
        sa, sb = slot_of.get(a), slot_of.get(b)
        if sa is None or sb is None:
            return False
        e, exp, cm = self._empty, self._exp, self._ctx.geo.cover_masks
        if (e >> sa) & 1 or (e >> sb) & 1:
            return False
        face_down = self._ctx.face_down
        for top, low in ((sa, sb), (sb, sa)):
            if (exp >> top) & 1 and cm[low] & ~e == 1 << top and low not in face_down:
                return True
        return False

    def _draw(self) -> Optional["GameState"]:
        stock = self._stock
        if not stock:
            return None
        ctx = self._ctx
        n = ctx.draw_count
        taken, rest = stock[:n], stock[n:]
        if ctx.waste_piles == 1:
            waste = (self._waste[0] + taken,)
        else:
            piles = list(self._waste)
            for i, p in enumerate(taken):
                piles[i] = piles[i] + (p,)
            waste = tuple(piles)
        return self._replace(stock=rest, waste=waste)

    def _locate_available(self, card: Card) -> Optional[tuple[int, int]]:
        """``(source, where)`` when ``card`` can be played now, else ``None``."""
        k = self._k
        s = k.slot_of.get(card)
        if s is not None:
            return (PYR, s) if (self._exp >> s) & 1 else (CELL, -1) if card in self._cells else None
        if card in self._cells:
            return CELL, -1
        r = k.res_of.get(card)
        if r is not None:
            res = self._res
            return (RES, r) if not (res >> r) & 1 and not self._ctx.reserve_above[r] & ~res else None
        p = k.pos_of.get(card)
        if p is None:
            return None
        if self._stock and self._stock[0] == p and self._ctx.stock_playable:
            return STOCK, 0
        for i, pile in enumerate(self._waste):
            if pile and pile[-1] == p:
                return WASTE, i
        return None

    # --- results ---------------------------------------------------------------------------
    def _pyramid_cleared(self) -> bool:
        if self._empty != self._ctx.geo.full:
            return False
        # a pyramid card parked in a cell does not count as cleared
        slot_of = self._k.slot_of
        return not any(c in slot_of for c in self._cells)

    def pyramid_cleared(self) -> bool:
        return self._pyramid_cleared()

    def is_won(self) -> bool:
        if self._ctx.win == WIN_ALL:
            return self._gone == self._ctx.deck_mask
        return self._pyramid_cleared()

    @property
    def result(self) -> str:
        """``"won"``, ``"lost"`` or ``"playing"``.

        Lost means no legal move is left, or only draws and recycles are and
        turning the stock can never make another move possible (the usual end
        of a game with unlimited passes).
        """
        res = self._result
        if res is None:
            res = self._compute_result()
            self._result = res
        return res

    def _compute_result(self) -> str:
        if self.is_won():
            return WON
        if self._unknown_in_play():
            return PLAYING  # an unknown card may still pair: only a reveal can tell
        state: GameState = self
        seen: set = set()
        while True:
            moves = state.legal_moves()
            if not moves:
                return LOST
            if any(m.kind not in (DRAW, RECYCLE) for m in moves):
                return PLAYING
            turn = (state._stock, state._waste)
            if turn in seen:
                return LOST
            seen.add(turn)
            state = state._play(moves[0])  # only one of draw/recycle is ever legal

    def _unknown_in_play(self) -> bool:
        sc, pyr = self._k.stock, self._k.pyramid
        if None in sc and (any(sc[p] is None for p in self._stock)
                           or any(sc[p] is None for pile in self._waste for p in pile)):
            return True
        if None in pyr:
            m = self._exp
            while m:
                low = m & -m
                if pyr[low.bit_length() - 1] is None:
                    return True
                m ^= low
        return False

    # --- knowledge -----------------------------------------------------------------------
    def unseen(self) -> frozenset[Card]:
        """Cards of the deck not known anywhere in the state."""
        return self._k.unseen

    def reveal(self, card: Card | str, slot: Optional[int] = None) -> "GameState":
        """Name an unknown card that has just been seen.

        Without ``slot``: the first unknown among the next ``draw`` stock cards,
        else an unknown waste top. With ``slot``: a face-down pyramid card.
        """
        from companion.game.knowledge import reveal_next
        return reveal_next(self, card, slot)

    def reveal_stock(self, card: Card | str, depth: int = 0) -> "GameState":
        """Name the unknown stock card ``depth`` places below the next one to draw."""
        from companion.game.knowledge import reveal_stock
        return reveal_stock(self, card, depth)

    def reveal_waste(self, card: Card | str, pile: int = 0, depth: int = 0) -> "GameState":
        """Name the unknown card ``depth`` places below the top of waste ``pile``."""
        from companion.game.knowledge import reveal_waste
        return reveal_waste(self, card, pile, depth)

    def fill_unknown(self, rng: "random.Random") -> "GameState":
        """The same position with every unknown card named at random from ``unseen()``
        (one sample for a hidden-stock advisor; returns ``self`` when nothing is unknown)."""
        from companion.game.knowledge import fill_unknown
        return fill_unknown(self, rng)

    def _with_known(self, known: Known) -> "GameState":
        new = self._replace()
        new._k = known
        return new

    # --- identity ----------------------------------------------------------------------------
    def key(self) -> tuple:
        """Hashable position key within one deal: equal positions give equal keys."""
        key = self._key
        if key is None:
            rec = self._recycles if self._ctx.recycles is not None else 0
            key = (self._empty | (self._res << 64) | (rec << 128), self._stock, self._waste,
                   self._cells)
            self._key = key
        return key

    def __hash__(self) -> int:
        return hash(self.key())

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, GameState) and self.key() == other.key()
                and self._k.deal.cards == other._k.deal.cards and self._ctx.rules == other._ctx.rules)

    def __copy__(self) -> "GameState":
        return self

    def __deepcopy__(self, memo: dict) -> "GameState":
        return self

    def __reduce__(self):
        return (_rebuild, (self._ctx.rules, self._k.deal, self._empty, self._stock, self._waste,
                           self._cells, self._res, self._gone, self._recycles, self._cleared_pass))

    def __str__(self) -> str:
        from companion.game.render import render_state
        return render_state(self)

    def __repr__(self) -> str:
        return (f"<GameState {self.rules.name} pass {self.pass_number} cards left {self.cards_left()} "
                f"{self.result}>")


def _index(card: Card) -> int:
    return card.index


def _rebuild(rules: Rules, deal: Deal, empty: int, stock: tuple, waste: tuple, cells: tuple, res: int,
             gone: int, recycles: int, cleared_pass: int) -> GameState:
    ctx = context_for(rules)
    exp = ctx.geo.exposed_mask(empty)
    return GameState._make(ctx, Known.from_deal(ctx, deal), empty, exp, stock, waste, cells, res, gone,
                           recycles, cleared_pass)


