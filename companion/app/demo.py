"""The built-in demo sources: the bundled rendered game video, or a drawn table as a fallback.

``DemoSource(rules)`` plays the bundled video ``datasets/games/<DEMO_GAME>/game.mp4`` (a short game
rendered by ``tools/render_games.py`` with held-out card designs: hands, pauses, light drift, shake)
through the recognition pipeline when the file is there and the rules lay out the same table
(``VideoDemoSource``); the cards are read by the shipped ONNX model when one is installed, else by
the fake detector fed by the video's per-frame truth. Otherwise (or with ``video=False``) it is the
drawn demo below.

The drawn demo: a drawn table with two deliberate misreads, then a game played on it.
Used when no camera exists and no demo video is bundled, so a newcomer sees
recognition, low-confidence marks, correction, play-along and advice at once.
The layout comes with each frame (no model needed): it is what a recognizer
would report, including the two misread slots (until their cards are taken).
After ``start_game()`` (the window calls it on Confirm) the "hands" play one
move every ``step_s`` seconds: kings, then pairs, then the stock, never
touching a face-up stock top (the layout has no place for it).
"""

from __future__ import annotations

import json
import random
import threading
import time
from pathlib import Path
from typing import Any, Optional

from companion.cards import Card
from companion.layout import SlotReading, TableLayout
from companion.moves import DRAW, REMOVE, Move
from companion.rules import Rules
from companion.app.capture import Frame
from companion.app.places import STOCK, WASTE, Place

WIDTH, HEIGHT = 1280, 720
CARD_W, CARD_H = 104, 146
STEP_Y = CARD_H * 0.55
#: (row, index) of the slots the demo "misreads", with the score of the wrong reading.
MISREADS = {(3, 1): 0.46, (5, 4): 0.52}


def _corner(x: float, y: float) -> tuple[float, float, float, float]:
    """The index corner (rank and suit) of a card drawn at ``x, y``: what a detector boxes."""
    return (x + 2, y + 4, x + 40, y + 72)


def demo_deal(rules: Rules, seed: int = 7) -> list[Card]:
    cards = list(rules.deck_cards())
    random.Random(seed).shuffle(cards)
    return cards


def _misread_of(card: Card, used: set[Card], rules: Rules) -> Card:
    """A plausible misread: same suit, a nearby rank (6 for 8, ...), not in the pyramid."""
    for delta in (2, -2, 1, -1, 3, -3):
        rank = card.rank + delta
        if 1 <= rank <= 13:
            other = Card(rank, card.suit)
            if other not in used and other in rules.deck_cards():
                return other
    return card


def _playable(rules: Rules) -> bool:
    return (rules.waste_piles == 1 and not rules.free_cells and not rules.reserve and not rules.inverted
            and not rules.face_down_rows)


#: The bundled demo game (a folder of ``datasets/games``).
DEMO_GAME = "g00007"
GAMES_DIR = Path(__file__).resolve().parents[2] / "datasets" / "games"


def bundled_video(rules: Rules, folder: Optional[Path] = None) -> Optional[Path]:
    """The bundled demo game folder when its files exist and ``rules`` lay out its table, else None."""
    folder = folder or GAMES_DIR / DEMO_GAME
    try:
        truth = json.loads((folder / "truth.json").read_text())
    except (OSError, ValueError):
        return None
    if not truth.get("video") or not (folder / truth["video"]).is_file() or not (folder / "labels.jsonl").is_file():
        return None
    try:
        video_rules = Rules.parse(truth["rules"])
    except ValueError:
        return None
    same_table = all(getattr(rules, f) == getattr(video_rules, f) for f in (
        "rows", "deck", "draw", "waste_piles", "free_cells", "reserve", "inverted", "face_down_rows",
        "stock_playable"))
    return folder if same_table and _playable(rules) else None


def open_demo(rules: Rules) -> Any:
    """The demo a newcomer sees: the bundled video when it fits ``rules``, else the drawn table."""
    folder = bundled_video(rules)
    if folder is not None:
        try:
            return VideoDemoSource(rules, folder)
        except TableNotFound as exc:  # the model cannot read the demo: the fake detector plays it
            try:
                source = VideoDemoSource(rules, folder, detector=None)
            except (OSError, ValueError, RuntimeError):
                pass
            else:
                source.recognition = f"fake detector: the model did not find the dealt table - {exc}"
                return source
        except (OSError, ValueError, RuntimeError):
            pass
    return DemoSource(rules, video=False)


class TableNotFound(ValueError):
    """The demo video's dealt table was not recognised (a poor or mismatched model)."""


class DemoSource:
    def __new__(cls, rules: Rules, seed: int = 7, step_s: float = 2.5, video: Optional[bool] = None) -> Any:
        # ``DemoSource(rules)`` (what the app opens) plays the bundled video when it fits the rules;
        # subclasses and ``video=False`` get the drawn table.
        if cls is DemoSource and video is not False:
            demo = open_demo(rules)
            if isinstance(demo, VideoDemoSource):
                return demo
        return super().__new__(cls)

    def __init__(self, rules: Rules, seed: int = 7, step_s: float = 2.5, video: Optional[bool] = None) -> None:
        self.name = "demo"
        self.recognition = "drawn demo table: recognition simulated, with two misreads to correct"
        self.rules = rules
        self.deal = demo_deal(rules, seed)
        self.step_s = step_s
        pyramid = self.deal[: rules.pyramid_size]
        self._misread = {(r, i): _misread_of(pyramid[r * (r + 1) // 2 + i], set(pyramid), rules)
                         for (r, i) in MISREADS}
        self._count = 0
        self._playing = threading.Event()
        self._next_step = 0.0
        self.state: Any = None
        #: The moves the demo's "hands" made, in order (the truth play-along should recover).
        self.played: list[Move] = []
        self._image, self.layout, self.boxes = self._render(list(pyramid), None, True,
                                                            self.deal[rules.pyramid_size])

    # --- the game on the table --------------------------------------------------------
    def start_game(self) -> None:
        """Start playing moves on the table (thread-safe: called from the GUI thread)."""
        self._playing.set()

    def _step(self) -> None:
        if self.state is None:
            try:
                from companion.game import Deal, GameState
            except ImportError:
                return
            if not _playable(self.rules):
                return
            self.state = GameState.initial(self.rules, Deal.parse(" ".join(map(str, self.deal)), self.rules))
        if self.state.result != "playing":
            return
        move = self._choose(self.state)
        if move is None:
            return
        self.state = self.state.apply(move)
        self.played.append(move)
        state = self.state
        waste = state.waste[0]
        self._image, self.layout, self.boxes = self._render(list(state.pyramid), waste[-1] if waste else None,
                                                            bool(state.stock),
                                                            state.stock[0] if state.stock else None)

    def _choose(self, state: Any) -> Optional[Move]:
        stock_top = state.stock[0] if state.stock and self.rules.stock_playable else None
        moves = [m for m in state.legal_moves() if stock_top is None or stock_top not in m.cards]
        if not moves:
            return None
        pyramid = {c for c in state.pyramid if c is not None}

        def rank(m: Move) -> tuple:
            if m.kind == REMOVE:
                return (0 if len(m.cards) == 1 else 1, -sum(c in pyramid for c in m.cards))
            return (2, 0 if m.kind == DRAW else 1)

        return min(moves, key=rank)

    # --- drawing -------------------------------------------------------------------------
    def _render(self, pyramid: list[Optional[Card]], waste_top: Optional[Card], stock_present: bool,
                stock_top: Optional[Card] = None):
        """The table image, its layout and the corner boxes. With ``stock_playable`` rules the stock's
        top card lies face up (it is in play), so it is drawn, boxed and reported."""
        import cv2
        import numpy as np

        rules = self.rules
        image = np.zeros((HEIGHT, WIDTH, 3), np.uint8)
        image[:] = (40, 100, 30)  # green felt (BGR)
        image = cv2.add(image, np.random.default_rng(1).integers(0, 12, image.shape, dtype=np.uint8))
        readings: list[list[SlotReading]] = []
        boxes: dict[Place, tuple[float, float, float, float]] = {}
        flat = 0
        for r in range(rules.rows):
            row: list[SlotReading] = []
            y = 16 + r * STEP_Y
            x0 = WIDTH / 2 - ((r + 1) * CARD_W + r * 10) / 2
            for i in range(r + 1):
                card = pyramid[flat]
                flat += 1
                if card is None:
                    row.append(SlotReading.empty(0.95))
                    continue
                x = x0 + i * (CARD_W + 10)
                self._draw_card(image, card, int(x), int(y))
                boxes[Place.slot(r, i)] = _corner(x, y)
                wrong = self._misread.get((r, i))
                if wrong is None:
                    row.append(SlotReading(card, 0.97, ((card, 0.97),)))
                else:
                    score = MISREADS[(r, i)]
                    row.append(SlotReading(wrong, score, ((wrong, score), (card, round(score - 0.08, 2)))))
            readings.append(row)
        # Stock (face down) and waste to the left of the pyramid's lower rows.
        sx, sy = int(WIDTH / 2 - 5.8 * CARD_W), int(16 + (rules.rows - 1) * STEP_Y)
        if stock_present:
            for k in range(3):
                box = (sx + 2 * k, sy - 2 * k), (sx + CARD_W + 2 * k, sy + CARD_H - 2 * k)
                cv2.rectangle(image, *box, (120, 60, 20), -1)
                cv2.rectangle(image, *box, (230, 230, 230), 2)
            boxes[Place(STOCK)] = (sx, sy, sx + CARD_W, sy + CARD_H)
        face_up = stock_top if stock_present and rules.stock_playable else None
        if face_up is not None:
            self._draw_card(image, face_up, sx + 4, sy - 4)
            boxes[Place(STOCK)] = _corner(sx + 4, sy - 4)
        wx, wy = sx, int(sy - CARD_H - 30)
        if waste_top is not None:
            self._draw_card(image, waste_top, wx, wy)
            boxes[Place(WASTE)] = _corner(wx, wy)
        problems = tuple(f"r{r + 1}s{i + 1}: low confidence" for (r, i) in MISREADS
                         if pyramid[r * (r + 1) // 2 + i] is not None)
        layout = TableLayout(tuple(tuple(row) for row in readings),
                             waste=((waste_top,),) if waste_top is not None else ((),),
                             stock_present=stock_present, problems=problems,
                             extra={"stock_top": face_up} if face_up is not None else {})
        return image, layout, boxes

    @staticmethod
    def _draw_card(image, card: Card, x: int, y: int) -> None:
        import cv2

        cv2.rectangle(image, (x + 3, y + 3), (x + CARD_W + 3, y + CARD_H + 3), (20, 50, 15), -1)  # shadow
        cv2.rectangle(image, (x, y), (x + CARD_W, y + CARD_H), (245, 245, 245), -1)
        cv2.rectangle(image, (x, y), (x + CARD_W, y + CARD_H), (90, 90, 90), 1)
        color = (40, 40, 200) if card.suit in "DH" else (30, 30, 30)
        rank = "10" if card.rank == 10 else card.code[0]
        cv2.putText(image, rank, (x + 6, y + 34), cv2.FONT_HERSHEY_SIMPLEX, 1.1, color, 2, cv2.LINE_AA)
        cv2.putText(image, card.suit, (x + 8, y + 64), cv2.FONT_HERSHEY_SIMPLEX, 0.9, color, 2, cv2.LINE_AA)
        cv2.putText(image, rank + card.suit, (x + CARD_W // 2 - 10, y + CARD_H - 20), cv2.FONT_HERSHEY_SIMPLEX,
                    0.6, color, 1, cv2.LINE_AA)

    # --- FrameSource ---------------------------------------------------------------------
    def reopen(self) -> bool:
        return True

    def read(self) -> Optional[Frame]:
        if self._playing.is_set():
            now = time.monotonic()
            if self._next_step == 0.0:
                self._next_step = now + self.step_s
            elif now >= self._next_step:
                self._next_step = now + self.step_s
                self._step()
        self._count += 1
        return Frame(self._image, self._count - 1, self.layout, dict(self.boxes))

    def close(self) -> None:
        pass


class VideoDemoSource:
    """The bundled rendered game, read through the recognition pipeline and the layout fuser.

    Before ``start_game()`` it shows the dealt table (the first stable layout); then it plays the
    video at its own frame rate (``speed`` times faster), and holds the last frame at the end.
    ``played`` lists the truth moves whose frames have been shown (what play-along should recover).
    """

    def __init__(self, rules: Rules, folder: Path, speed: float = 1.0, seed: int = 0,
                 detector: Any = "shipped") -> None:
        import cv2
        import numpy as np

        from companion.vision.fusion import LayoutFuser
        from companion.vision.pipeline import LayoutPipeline

        self.name = "demo video"
        self.rules = rules
        self.folder = Path(folder)
        self.truth = json.loads((self.folder / "truth.json").read_text())
        self.records = [json.loads(line) for line in (self.folder / "labels.jsonl").read_text().splitlines() if line]
        self.fps = float(self.truth.get("fps", 10.0))
        self.speed = speed
        self._cap = cv2.VideoCapture(str(self.folder / self.truth["video"]))
        if not self._cap.isOpened():
            raise OSError(f"cannot open the demo video {str(self.folder / self.truth['video'])!r}")
        self._rng = np.random.default_rng(seed)
        from companion.app.recognition import shipped_detector

        if isinstance(detector, str) and detector == SHIPPED:
            self.detector, why = shipped_detector()
        else:
            self.detector, why = detector, ("a given detector" if detector is not None else "asked for")
        #: How the frames are recognised, in words for the status bar.
        self.recognition = (why if self.detector is not None else
                            f"fake detector (reads the video's labels), {why}")
        self.detector_name = self.recognition
        self._overlay: Any = None
        self._pipeline = LayoutPipeline(self.detector, rules)
        self._fuser = LayoutFuser.for_fps(self.fps, rules=rules, pipeline=self._pipeline)
        self._frame = -1
        self._image: Any = None
        self.layout: Optional[TableLayout] = None
        self._playing = threading.Event()
        self._started_at = 0.0
        self._start_frame = 0
        self._count = 0
        self.played: list[Move] = []
        self.deal = _codes(self.truth["deal"])
        # read until the dealt table is stable: that is what the set-up step shows
        # (no further than the first move's end: a model that cannot read it gives up quickly)
        first_move = min((m["frames"][1] for m in self.truth.get("moves", [])), default=len(self.records))
        while self.layout is None and self._frame < first_move and self._advance():
            pass
        if self.layout is None:
            self._cap.release()
            raise TableNotFound(f"{self.recognition.split(' - ')[0]} sees no stable table in the first "
                                f"{self._frame + 1} frames of {str(self.folder.name)!r}")

    def _advance(self) -> bool:
        ok, image = self._cap.read()
        if not ok or image is None or self._frame + 1 >= len(self.records):
            return False
        self._frame += 1
        self._image = image
        if self.detector is not None:
            reading = self._pipeline.process(image, frame=self._frame)
        else:
            reading = self._pipeline.read(self._fake(self.records[self._frame]), frame=self._frame,
                                          image_size=(image.shape[1], image.shape[0]))
        self._overlay = reading
        layout = self._fuser.update(reading, frame=self._frame)
        if layout is not None:
            self.layout = layout
        done = [Move.parse(m["move"]) for m in self.truth["moves"] if m["frames"][1] <= self._frame]
        if len(done) > len(self.played):
            self.played = done
        return True

    def _fake(self, rec: dict) -> Any:
        from companion.vision.fake import Hand, Noise, detections_from_truth
        w, h = self.truth["size"]
        truth = {"labels": [{"cls": c, "box": b} for c, *b in rec["labels"]], "width": w, "height": h}
        hands = ()
        if rec.get("hand"):
            r = float(self.truth.get("card_width_px", 60.0)) * 0.3
            hands = (Hand(rec["hand"][0], rec["hand"][1], r, garble_margin=3.0, garble_rate=0.3),)
        return detections_from_truth(truth, Noise(hands=hands), self._rng)

    def start_game(self) -> None:
        self._playing.set()

    def know_deal(self, pyramid: Any) -> None:
        """The deal as the person checked it, for the pipeline (``LiveRecognizer.know_deal``)."""
        self._pipeline.know_deal(pyramid)

    def reopen(self) -> bool:
        return True

    def read(self) -> Optional[Frame]:
        if self._playing.is_set():
            now = time.monotonic()
            if not self._started_at:
                self._started_at, self._start_frame = now, self._frame
            target = self._start_frame + int((now - self._started_at) * self.fps * self.speed)
            before = self.layout
            # catch up with the clock, but hand every newly stable layout out at least once
            while self._frame < target and self.layout is before and self._advance():
                pass
        self._count += 1
        from companion.app.recognition import overlay_of, with_overlay

        frame = Frame(self._image, self._count - 1)
        return with_overlay(frame, overlay_of(self._overlay), self.layout) if self._overlay is not None else \
            Frame(self._image, self._count - 1, self.layout)

    def close(self) -> None:
        self._cap.release()


def _codes(text: str) -> list[Card]:
    return [Card.parse(t) for t in text.split()]


#: ``VideoDemoSource(detector=SHIPPED)`` (the default): the installed model, else the fake; None: the fake.
SHIPPED = "shipped"
