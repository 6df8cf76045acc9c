"""One open card lifted alone: the first card of a pair being picked up, or an illegal removal.

The follower waits (``Follower.lone_s`` after the camera last read the card) before it calls a
lone removal illegal, so that the person can pick up the second card. People lifting a pair one
card at a time take up to about two seconds between the two, and a card lifted alone is back in
2-3 s, so the wait cannot simply be longer. What settles it is the second card: while a card the
lifted one pairs with is out of the camera's sight (a hand over it, reaching for it), the pair is
most likely being completed, and the verdict waits, up to ``MAX_WAIT`` times ``lone_s`` in all.
The same while the view is blocked: several other cards of the table out of sight at once (a
hand or an arm over it) hide whether the card came back or the pair was completed, and a
verdict then says what the camera could not see (a rendered game read by a weaker detector:
"9D, 4D gone" said while a hand over the table took the next cards, 9D+4D being legal).
The verdict comes sooner (``EARLY_S``) once the hand has plainly left the table: every other card
in view read frame after frame for ``CLEAR_S`` and each partner in sight all along. Reaching for
the second card hides it, or some card under the hand; a card lifted alone is held off the table
(the person looking at it) and put back a second or two later, often before the full wait ends
(rendered games hold it off about 2 s: g00568, 2S said one frame after it was put back).
(On 100 rendered games read by the fake detector, 10 of 17 false "removed alone" warnings came
one to three frames before the second card of the pair was seen gone.)

A view with a waste pile empty where the game has a card beneath its top waits the same way
(``waste_unread``): taking the top shows that card, so the camera most likely missed it (5 of
those 17 warnings; the next view showed the card).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Mapping, Optional

from companion.cards import Card
from companion.playalong.view import Observation

#: A partner not read for this long (seconds) is out of sight: a hand is over it.
PARTNER_UNSEEN_S = 0.3
#: The verdict waits for a partner out of sight at most this many times ``lone_s`` after the lift.
MAX_WAIT = 2.0
#: Other cards of the table unread at once that make a blocked view (a move takes at most two
#: cards, and a hand completing a pair hides its partner: more, and at least a quarter of the
#: table, is a hand over it; a model's occasional miss is one card).
BLOCKED_CARDS = 3
#: With the view clear (nothing under a hand) the verdict waits this long after the lift ...
EARLY_S = 1.0
#: ... once the view has stayed clear this long (a hand moving between two cards of a pair
#: covers one for a few frames at least).
CLEAR_S = 0.2
#: A card read within this many frames counts as in sight (the detector misses a card now and then).
READ_LAG = 2


@dataclass(frozen=True)
class LoneCard:
    """``lifted``: frame just after the camera last read the card (-1: unknown);
    ``text``: why it is illegal if it stays gone; ``partners``: open cards it pairs with;
    ``watched``: the other cards in view when it was lifted (a blocked view hides several)."""

    lifted: int
    text: str
    partners: tuple[Card, ...] = ()
    watched: tuple[Card, ...] = ()
    #: The view was blocked since the lift (``view_blocked``): the verdict waits as for a partner.
    blocked: bool = False
    #: The card(s) lifted.
    cards: tuple[Card, ...] = ()
    #: The view that waits because a waste pile read empty over a card beneath its top
    #: (``waste_unread``): at the verdict it is explained with that pile unread, where it can be.
    unread: Optional[Observation] = None
    #: A waste top gone with a learned card beneath it seen (``Follower._beneath``): no clock,
    #: the next view decides.
    beneath: bool = False
    #: One removed card read again, on the waste or the pyramid, the pyramid otherwise as it was or
    #: a legal removal from it (``UnexplainedViews._unexplained``): most often a misread for a view,
    #: or a card taken held over its slot; illegal only if it stays (no "put back" said).
    reread: bool = False
    #: First frame of the run of clear frames going on (``note_view``): every watched card read,
    #: every partner in sight; -1: the view is not clear now, -2: a partner was out of sight since.
    clear_from: int = -1

    def due(self, frame: int, fps: float, lone_s: float,
            sightings: Optional[Mapping[Card, int]] = None) -> bool:
        """Whether the card has been gone long enough to call it illegal at ``frame``.
        ``sightings``: the last frame each card was read (the fuser's ``last_seen``)."""
        if self.lifted < 0 or frame < 0 or self.beneath:
            return False
        waited = frame - self.lifted
        if (waited > min(EARLY_S, lone_s) * fps and self.clear_from >= 0 and not self.blocked
                and frame - self.clear_from >= CLEAR_S * fps):
            return True  # the hand has left the table with one card: not reaching for a second
        if waited <= lone_s * fps:
            return False
        if sightings and waited <= MAX_WAIT * lone_s * fps:  # a partner out of sight: wait on
            if self.blocked:
                return False  # the view was blocked meanwhile: wait on too
            return not any(c in sightings and frame - sightings[c] > PARTNER_UNSEEN_S * fps
                           for c in self.partners)
        return True

    def note_view(self, frame: int, sightings: Optional[Mapping[Card, int]]) -> "LoneCard":
        """This card with ``clear_from`` updated for ``frame`` (a plain lift only: a wait on a
        waste read empty or a card read again has no hand to watch)."""
        if (not sightings or frame < 0 or not self.cards or not self.watched or self.unread is not None
                or self.reread or self.beneath or self.clear_from == -2):
            return self
        if any(c in sightings and frame - sightings[c] > READ_LAG for c in self.partners):
            return replace(self, clear_from=-2)  # reaching for a partner: the plain wait decides
        clear = all(c not in sightings or frame - sightings[c] <= READ_LAG for c in self.watched)
        if not clear:
            return replace(self, clear_from=-1) if self.clear_from != -1 else self
        return replace(self, clear_from=frame) if self.clear_from == -1 else self

    def view_blocked(self, frame: int, sightings: Optional[Mapping[Card, int]]) -> bool:
        """Several other cards of the table unread in this very frame: a hand over the table."""
        if not sightings or frame < 0:
            return False
        unread = sum(1 for c in self.watched if c in sightings and sightings[c] < frame)
        return unread >= max(BLOCKED_CARDS, len(self.watched) / 4)


def lone_card(rules: Any, state: Any, obs: Observation, gone: list[Card], text: str) -> LoneCard:
    """The lone card(s) ``gone`` in ``obs``, with the open cards they pair with."""
    partners = tuple(c for c in state.available() if c not in gone and any(rules.pairs(c, g) for g in gone))
    watched = tuple(sorted((c for c in obs.visible() if c not in gone), key=str))
    return LoneCard(lifted_at(obs, gone), text, partners, watched, cards=tuple(gone))


def lifted_at(obs: Observation, gone: list[Card]) -> int:
    """When a lone card was lifted: just after the camera last read it (the fuser's record;
    the stable view without it comes a second or so later), else this view's frame."""
    seen = [obs.last_seen[c] + 1 for c in gone if c in obs.last_seen]
    return min([obs.frame] + seen) if obs.frame >= 0 else obs.frame


def waste_unread(state: Any, obs: Observation) -> bool:
    """A waste pile seen empty where the game has a card beneath its top (taking the top shows
    that card): the camera missed it, most likely, rather than the person emptying the pile."""
    return any(len(pile) >= 2 and not seen for pile, seen in zip(state.waste, obs.waste))


def waste_back(state: Any, before: Optional[Observation], now: Observation) -> bool:
    """A waste pile read empty over the game's top in the view ``before`` and that top read again
    ``now``: what lay on it the camera could not read, most often a card drawn that went in a pair
    meanwhile (g00580: 7H drawn, read as nothing, taken with 6H; "6H removed alone" said). Not
    when the camera read a card the game holds deeper in a pile since ``before``: that card was
    turned now, misread when the record learned it (``RecordRevisions._forget_learned``)."""
    if before is None or before.loose or now.loose or not any(
            pile and not seen and top and top[-1] is pile[-1]
            for pile, seen, top in zip(state.waste, before.waste, now.waste)):
        return False  # (a loose view's piles are no waste piles one by one)
    return not any(now.last_seen.get(c, -1) > before.frame for pile in state.waste for c in pile[:-1])
