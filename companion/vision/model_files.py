"""Where the recognition model's files live, and their names.

The shipped model is two ONNX files plus a small JSON of settings, all in ``models/``:

- ``corner_detector.onnx``: finds card index corners (one class) in a letterboxed frame;
- ``card_classifier.onnx``: names a square crop around one corner (52 classes, ``CARD_CODES``,
  and with ``background`` a 53rd: not a card's index);
- ``recognition.json``: input sizes, crop margin and thresholds both stages were trained with;
- ``face_classifier.onnx`` (optional): names a card from a crop of its face anchored at its first
  index (``companion.vision.face_read``), for cards small in the frame;
- more index classifiers (optional, ``extra_classifiers`` in the settings): each crop's
  probabilities are the mean of every classifier's (an ensemble).

``PYRAMID_COMPANION_MODELS`` overrides the folder (tests, a user's fine-tuned model).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Optional

from companion.cards import CARD_CODES
from companion.errors import CompanionError

DETECTOR_FILE = "corner_detector.onnx"
CLASSIFIER_FILE = "card_classifier.onnx"
SETTINGS_FILE = "recognition.json"
FACE_FILE = "face_classifier.onnx"
ENV_VAR = "PYRAMID_COMPANION_MODELS"


class ModelFileError(CompanionError):
    """A model folder or file that is missing, unreadable or not a model of this project."""


def default_models_dir() -> Path:
    """``$PYRAMID_COMPANION_MODELS`` or ``models/`` at the repository root."""
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env)
    return Path(__file__).resolve().parents[2] / "models"


@dataclass(frozen=True)
class RecognitionSettings:
    """What inference must do exactly as training did (saved beside the weights)."""

    detector_size: tuple[int, int] = (384, 640)   # (height, width) of the detector input
    classifier_size: int = 64                     # square crop side fed to the classifier
    crop_margin: float = 1.3                      # crop side = margin * longer side of the corner box
    detector_conf: float = 0.25                   # a corner scoring at least this is surely one
    #: A fainter corner, down to ``faint_conf``, counts when the classifier names it at least
    #: ``faint_name`` sure (see ``OnnxCardDetector.detect``). None: fainter corners never count.
    faint_conf: Optional[float] = None
    faint_name: float = 0.8
    #: A corner the classifier names less than ``multi_crop_below`` sure is named again from crops of
    #: the other ``multi_crop_margins`` (crop side / corner box), and the readings' log-probabilities
    #: are averaged (see ``OnnxCardDetector.classify``). None: every corner is read once.
    multi_crop_below: Optional[float] = None
    multi_crop_margins: tuple[float, ...] = (1.15, 1.45)
    nms_iou: float = 0.5
    class_names: tuple[str, ...] = field(default=CARD_CODES)
    #: The classifier has one more class after the cards: no index at all (a card's back, its
    #: pips or picture, the table, a hand). Such a crop then names no card surely.
    background: bool = False
    #: Cards whose first index box is under this many pixels on its longer side are named again from
    #: their face too (``face_classifier.onnx``, ``companion.vision.face_read``); None: never.
    face_below_px: Optional[float] = None
    #: The face reading's weight against the index reading's when the two are pooled.
    face_weight: float = 1.0
    #: Sizes of the face crops a card is named from (``face_read.face_crop``'s ``scale``: times
    #: ``FACE_SIDE`` index sides), their probabilities averaged. The shipped face net names crops
    #: at 0.9 best (``tools/evaluate_naming.py --face-scales``).
    face_crop_scales: tuple[float, ...] = (1.0,)
    #: More index classifiers in the same folder (file names): a crop's probabilities are the mean
    #: of theirs and ``card_classifier.onnx``'s. Two nets trained apart err apart: averaged, they
    #: name more corners and name fewer false ones surely (see the model card).
    extra_classifiers: tuple[str, ...] = ()
    #: A classifier (file name in the folder) trained with the turn as a label (``tools/train.py
    #: --cls-turn``) run beside the others only to tell which way each index stood in its crop
    #: (``Detections.upright``); its names are not averaged with theirs. None: no such net.
    turn_classifier: Optional[str] = None

    @property
    def classifier_classes(self) -> int:
        return len(self.class_names) + int(self.background)

    def to_json(self) -> str:
        data = asdict(self)
        data["detector_size"] = list(self.detector_size)
        data["class_names"] = list(self.class_names)
        data["multi_crop_margins"] = list(self.multi_crop_margins)
        data["face_crop_scales"] = list(self.face_crop_scales)
        data["extra_classifiers"] = list(self.extra_classifiers)
        return json.dumps(data, indent=2) + "\n"

    @classmethod
    def from_json(cls, text: str, source: str = "settings") -> "RecognitionSettings":
        try:
            data = json.loads(text)
            if not isinstance(data, dict):
                raise TypeError(f"expected a JSON object, got {type(data).__name__}")
            known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
            if "detector_size" in known:
                h, w = known["detector_size"]
                known["detector_size"] = (int(h), int(w))
            if "class_names" in known:
                known["class_names"] = tuple(known["class_names"])
            for name in ("multi_crop_margins", "face_crop_scales"):
                if name in known:
                    known[name] = tuple(float(m) for m in known[name])
            scales = known.get("face_crop_scales", (1.0,))
            if not scales or min(scales) <= 0:
                raise ValueError(f"face_crop_scales must be positive sizes, got {data['face_crop_scales']!r}")
            if "extra_classifiers" in known:
                names = known["extra_classifiers"]
                if not isinstance(names, list) or not all(isinstance(n, str) and n and "/" not in n for n in names):
                    raise TypeError(f"extra_classifiers must be a list of file names, got {names!r}")
                known["extra_classifiers"] = tuple(names)
            name = known.get("turn_classifier")
            if name is not None and not (isinstance(name, str) and name and "/" not in name):
                raise TypeError(f"turn_classifier must be a file name, got {name!r}")
            settings = cls(**known)
        except (ValueError, TypeError, KeyError) as exc:
            raise ModelFileError(f"{source}: not valid recognition settings ({exc})") from None
        if settings.class_names != CARD_CODES:
            raise ModelFileError(
                f"{source}: class_names {list(settings.class_names)[:4]}... do not match the deck order "
                f"{list(CARD_CODES)[:4]}...")
        return settings

    @classmethod
    def load(cls, models_dir: Path) -> "RecognitionSettings":
        path = Path(models_dir) / SETTINGS_FILE
        if not path.is_file():
            return cls()
        return cls.from_json(path.read_text(), str(path))


def copy_with_first_classifier(models_dir: Path, out: Path) -> None:
    """Copy a model folder's files (flat: ``candidates/`` and the like stay behind) into ``out``,
    without its ``extra_classifiers``: a folder whose one index classifier is about to change."""
    import shutil

    settings = RecognitionSettings.load(models_dir)
    out.mkdir(parents=True, exist_ok=True)
    for path in Path(models_dir).iterdir():
        if path.is_file() and path.name not in settings.extra_classifiers:
            shutil.copyfile(path, out / path.name)
    if settings.extra_classifiers:
        (out / SETTINGS_FILE).write_text(replace(settings, extra_classifiers=()).to_json())


def model_paths(models_dir: str | os.PathLike | None = None) -> tuple[Path, Path]:
    """The detector and classifier files; ModelFileError names what is missing."""
    folder = Path(models_dir) if models_dir is not None else default_models_dir()
    if not folder.is_dir():
        raise ModelFileError(f"model folder {str(folder)!r} does not exist (set {ENV_VAR} or train one: "
                             "python tools/train.py)")
    paths = folder / DETECTOR_FILE, folder / CLASSIFIER_FILE
    missing = [p.name for p in paths if not p.is_file()]
    if missing:
        raise ModelFileError(f"model folder {str(folder)!r} lacks {', '.join(missing)} "
                             "(train one: python tools/train.py)")
    return paths
