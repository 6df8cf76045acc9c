"""Play-along: follow a physical game from stable table layouts (no Qt, no OpenCV).

``Follower(rules, deal)`` consumes :class:`~companion.layout.TableLayout` s and
records the moves it infers in a :class:`~companion.game.Game`, with events a
person can read (``move``, ``illegal``, ``check``). ``FollowStart`` starts one from
the first stable views (waiting for cards hidden in the first one).
``companion.playalong.stream`` reads layouts from JSON lines or from the vision pipeline.
"""

from companion.playalong.explain import Explainer, Explanation
from companion.playalong.events import CHECK, ILLEGAL, MOVE, Event
from companion.playalong.follower import Follower, deal_from_layout
from companion.playalong.start import FollowStart
from companion.playalong.view import Observation, agrees, observe, state_view

__all__ = ["CHECK", "ILLEGAL", "MOVE", "Event", "Explainer", "Explanation", "FollowStart", "Follower",
           "Observation", "agrees", "deal_from_layout", "observe", "state_view"]
