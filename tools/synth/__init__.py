"""Synthetic training data for card recognition: card art, table scenes, dataset writers.

Command: ``python tools/make_dataset.py --seed S --count N --split train|val --out data/NAME``
(``--start I``, ``--workers K``, ``--crops C`` per scene, ``--variants P``; resumable: existing images
are skipped, and scene ``i`` of seed ``S`` is always the same bytes, whatever the worker count or
resumption, given the same card-art cache and library versions).

Modules: ``art`` (Debian SVG decks -> cached PNG faces + measured index box), ``procedural`` (PIL
faces), ``deal`` (scene spec: which card where; legal-looking removals; rule variants), ``scene``
(table-plane layout, camera homography, compositing, labels, truth), ``look`` (table, wear, hands,
light, optics, sensor, JPEG), ``writer`` (files, crops, dataset.yaml). Rendered games (issue 6) can call
``scene.render_scene(rng, deck, spec=..., geometry=np.random.default_rng(G))``: the same geometry
generator seed keeps every slot, pile and the camera in place while the spec (cards) changes.

Output formats (stable; other tools consume them)
-------------------------------------------------
Everything for one dataset lives under its root ``OUT`` (the ``--out`` folder)::

    OUT/dataset.yaml                 ultralytics detect config, ABSOLUTE paths, written at generation time
    OUT/<split>/images/NAME.jpg      the camera frame (JPEG, usually 1280x720; other sizes occur)
    OUT/<split>/labels/NAME.txt      YOLO labels, one line per visible INDEX CORNER
    OUT/<split>/truth/NAME.json      layout truth (below)
    OUT/cls/<split>/<CODE>/NAME_k.jpg  classification crops of index corners (ultralytics classify layout)
    OUT/README.txt                   what is there, the commands, when generation finished

``NAME`` is ``<split>_s<seed>_<index:06d>``. Splits are ``train`` and ``val``; the val split uses only
the held-out deck designs of ``datasets/decks.json``, never seen in train.

YOLO labels: ``cls cx cy w h`` normalised to the image size; ``cls`` = ``Card.index`` (0..51, in
``companion.cards.CARD_CODES`` order, clubs A..K, diamonds, hearts, spades). One box per visible index
corner: the rank+suit index printed in a card's corner (upright top-left one and the rotated
bottom-right one). A card appears at most twice (its two corners). A corner is labelled when at least
``VISIBLE_MIN`` (0.75) of its area is seen (not covered by another card or a hand) and it lies inside
the frame; the box is the axis-aligned bounds of the corner's projected quad, clipped to the image.
``dataset.yaml`` ``names`` are the card codes in class-index order.

Classification crops: ``OUT/cls/train/<CODE>/*.jpg`` and ``OUT/cls/val/<CODE>/*.jpg``; square crops
(``CROP_SIZE`` 96 px) around one labelled index corner taken from the full-resolution frame with random
margin/scale/offset/rotation jitter; only corners at least 14 px tall in the frame are cropped (smaller
ones are labelled for detection but carry too few pixels to name). All 52 class folders always exist. NOTE: ultralytics classify numbers
classes by SORTED folder name, not in ``CARD_CODES`` order: map through the folder names.

Truth JSON (``truth/NAME.json``; all points in image pixels, x right, y down)::

    {
      "version": 1, "name": NAME, "image": "NAME.jpg", "width": W, "height": H,
      "split": "train"|"val", "seed": S, "index": i,
      "deck": "aisleriot/anglo" | "kde/oxygen" | "proc/<id>",   # the face design used
      "form": "pyramid"|"inverted",       # 7 or 6 rows, row 0 = apex (1 card) ... as TableLayout;
                                          #   inverted: apex row lowest in the picture, on top of the rest
      "rows": 7,
      "pyramid": [                        # pyramid[r][i], r = 0 apex row, i = left to right
        [ {"card": "QH" | null,           # null = slot empty (card removed; slot NOT shifted)
           "quad": [[x,y] x4],            # the card's outline TL, TR, BR, BL (card's own orientation);
                                          #   for an empty slot: where the card would lie (lattice)
           "center": [x, y],
           "corners": [ {"which": "tl"|"br", "box": [x1,y1,x2,y2], "quad": [[x,y] x4],
                         "visible": bool, "visible_fraction": f, "in_frame": bool} ] }, ...], ...],
      "pyramid_codes": [[code|null, ...], ...],      # the same, codes only (TableLayout.pyramid order)
      "waste": [ {"cards": [codes bottom..top], "top": code|null, "quad": [[x,y] x4] | null} ],  # 1 or 3 piles
      "stock": {"present": bool, "count": n, "quad": [[x,y] x4] | null},
      "loose": [ {"card": code, "quad": ..., "corners": [...]} ],   # face-up cards off the lattice
      # only in rule-variant scenes (--variants; absent otherwise, so read them with .get):
      "inverted": true,                   # when form == "inverted"
      "face_down_rows": k,                # rows 0..k-1 dealt face down; such slots carry "face_down": true
                                          #   and their (known) card, but no corners are labelled
      "reserve": [ {"card": code|null, "quad": ..., "corners": [...]} ],   # reserve row
      "cells": [ {"card": code|null, "quad": ..., "corners": [...]} ],     # free cells
      "labels": [ {"cls": k, "card": code, "box": [x1,y1,x2,y2], "where": "pyramid:r:i"|"waste:p:j"|
                  "loose:j", "which": "tl"|"br", "quad": [[x,y] x4]} ],  # exactly the lines of labels/NAME.txt,
                                          #   same order; quad: the corner's, as in "corners"
      "hands": [ {"box": [x1,y1,x2,y2]} ],
      "conditions": {"tilt_deg": f, "roll_deg": f, "card_width_px": f, "light": "normal"|"dim"|"uneven"|..,
                     "brightness": f, "glare": bool, "blur": "none"|"defocus"|"motion", "blur_px": f,
                     "noise": f, "jpeg_quality": q, "hands": n, "partial": bool, "removed": n,
                     "background": kind, "waste_piles": 1|3, "hard": bool, ...}
    }

``conditions.hard`` is true when the scene has a hard condition (tilt >= 35 deg, dim light, glare,
motion blur or defocus >= 1.1 px, or it was drawn from the hard mix: ``hard_mix``); group evaluation by
``tilt_deg``, ``light`` (normal/dim/glare/uneven/shadow), ``blur``, ``hands``, ``partial``, ``variant``.
``conditions.variant`` (inverted / face_down / reserve / cells) appears only in variant scenes.
"""

from __future__ import annotations

VISIBLE_MIN = 0.75
CROP_SIZE = 96
TRUTH_VERSION = 1
