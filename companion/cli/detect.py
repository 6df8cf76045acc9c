"""``pyramid-companion detect IMAGE [--json]``: the raw card detections of one image.

``--json`` prints ``[{"card": "QH", "box": [x1, y1, x2, y2], "score": 0.97}, ...]`` (box of the
index corner read, in pixels of the input image). Without it: one line per detection with the
runner-up names. Unreadable image or missing/corrupt model: message on stderr, exit status 2.
An image that reads weakly as it is (a table turned far from upright) is read again turned by
quarter turns and the surest reading is printed, in the image's own pixels; ``--upright`` reads once.
"""

from __future__ import annotations

import argparse
import json
import sys

from companion.errors import CompanionError


class ImageReadError(CompanionError):
    """An input image that does not exist or cannot be decoded."""


def register(subparsers) -> None:
    p = subparsers.add_parser("detect", help="recognise the cards in one image (raw detections)",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("image", help="image file (JPEG, PNG, ...)")
    p.add_argument("--json", action="store_true", help="print a JSON list")
    p.add_argument("--models", help="model folder (default: models/ or $PYRAMID_COMPANION_MODELS)")
    p.add_argument("--min-score", type=float, default=0.25, help="drop detections scoring lower (default 0.25)")
    p.add_argument("--threads", type=int, default=1,
                   help="ONNX Runtime threads a net (default 1; the corner finder takes at least 2)")
    p.add_argument("--upright", action="store_true",
                   help="read the image only as it is; by default a weak reading is compared with the image "
                        "turned by quarter turns (a table turned far from upright), and the surest wins")
    p.set_defaults(run=run)


def read_image(path: str):
    import os

    import cv2
    import numpy as np

    if not os.path.isfile(path):
        raise ImageReadError(f"image {path!r} does not exist")
    data = np.fromfile(path, np.uint8)
    image = cv2.imdecode(data, cv2.IMREAD_COLOR) if data.size else None
    if image is None:
        raise ImageReadError(f"image {path!r} cannot be read (not an image file OpenCV can decode)")
    return image


def run(args) -> int:
    from companion.vision.detector import OnnxCardDetector
    from companion.vision.quarter_turn import detect_any_way

    image = read_image(args.image)
    detector = OnnxCardDetector(args.models, threads=args.threads, min_score=args.min_score)
    if args.upright:
        detections = detector.detect(image)
    else:
        detections, _ = detect_any_way(detector, image)
    if args.json:
        print(json.dumps(detections.to_json()))
        return 0
    from companion.cards import CARD_CODES

    for i, (card, box, score) in enumerate(detections):
        alts = ""
        if detections.alt_class_id is not None:
            alts = "  or " + ", ".join(f"{CARD_CODES[int(c)]} {p:.2f}" for c, p in
                                       zip(detections.alt_class_id[i], detections.alt_confidence[i]))
        x1, y1, x2, y2 = (int(round(float(v))) for v in box)
        print(f"{card}  {score:.2f}  [{x1}, {y1}, {x2}, {y2}]{alts}")
    print(f"{len(detections)} corner(s) in {args.image}", file=sys.stderr)
    return 0
