"""One synthetic camera frame of a Pyramid table: layout on the table plane, camera, rendering, truth.

Table-plane units are card widths (a card is 1 wide, ``aspect`` tall). A scene is built by
``render_scene(rng, deck)``; every random choice comes from that generator, so the same generator
state gives the same bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np

from companion.cards import Card
from tools.synth import TRUTH_VERSION, VISIBLE_MIN, look
from tools.synth.art import DeckArt
from tools.synth.deal import check_spec, face_down_slots, random_spec

SIZES = [((1280, 720), 0.7), ((1920, 1080), 0.08), ((640, 480), 0.1), ((1024, 768), 0.07), ((960, 540), 0.05)]
HAND_ID = -2
MIN_CARD_PX = 38


@dataclass
class Placed:
    """A card lying on the table: plane corners TL, TR, BR, BL in the card's own orientation."""

    code: str | None          # None: face-down
    plane: np.ndarray         # (4, 2)
    where: str                # "pyramid:r:i", "waste:p:j", "loose:j", "stock:j"
    oid: int = 0
    quad: np.ndarray | None = None   # image corners, filled at render time
    empty: bool = False              # an empty pyramid slot: nothing drawn, quad kept for the truth
    face_down: bool = False          # a known card lying face down (face-down rows): drawn as a back


@dataclass
class SceneResult:
    image: np.ndarray                     # uint8 BGR (before JPEG)
    jpeg: bytes
    labels: list[dict]
    truth: dict
    extra: dict = field(default_factory=dict)


def card_plane(cx: float, cy: float, angle: float, aspect: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    pts = np.array([[-0.5, -aspect / 2], [0.5, -aspect / 2], [0.5, aspect / 2], [-0.5, aspect / 2]])
    rot = np.array([[c, -s], [s, c]])
    return pts @ rot.T + [cx, cy]


def build_layout(rng: np.random.Generator, aspect: float, index_box: tuple, spec: dict) -> dict:
    """Where every card of ``spec`` lies on the table plane.

    Geometry draws come from sub-generators spawned in a fixed order, so a fixed ``rng`` seed gives
    the same slot positions whatever the spec holds (frames of one game share one geometry).
    """
    g_pyr, g_piles, g_loose = rng.spawn(3)
    pyramid = spec["pyramid"]
    rows = len(pyramid)
    inverted = spec.get("form", "pyramid") == "inverted"
    gap = g_pyr.uniform(0.03, 0.35)
    dx = 1 + gap
    lo = max(0.3, index_box[3] + 0.05)
    dy = aspect * (g_pyr.uniform(lo, 0.6) if g_pyr.random() < 0.9 else g_pyr.uniform(0.6, 1.08))
    row_shift = g_pyr.normal(0, 0.04, 7)
    row_dy = g_pyr.normal(0, 0.025, 7) * aspect
    jit_xy = 0.02 if g_pyr.random() < 0.5 else 0.045
    jit_rot = np.radians(1.0 if g_pyr.random() < 0.5 else 3.0)
    jitter = g_pyr.normal(0, 1, (28, 3))
    slots = []
    for r in range(rows):
        row = []
        for i in range(r + 1):
            jx, jy, jr = jitter[r * (r + 1) // 2 + i]
            cx = (i - r / 2) * dx + row_shift[r] + jx * jit_xy
            rr = rows - 1 - r if inverted else r  # inverted: the apex row lies lowest
            cy = rr * dy + row_dy[r] + aspect / 2 + jy * jit_xy
            ang = float(np.clip(jr * jit_rot, -0.12, 0.12))
            row.append((pyramid[r][i], card_plane(cx, cy, ang, aspect)))
        slots.append(row)
    bottom = (rows - 1) * dy + aspect
    half_w = rows / 2 * dx

    # stock (face-down pile) and waste pile(s) below the pyramid, stock on the left by default
    y_piles = bottom + aspect * g_piles.uniform(0.15, 0.8) + aspect / 2
    reserve_codes = spec.get("reserve", [])
    if reserve_codes:  # a face-up reserve row between the pyramid and the piles
        y_piles += aspect * 1.35
    stock_left = g_piles.random() < 0.85
    side = 1 if stock_left else -1
    stock_x = -side * g_piles.uniform(0.6, half_w)
    ang0 = g_piles.normal(0, 0.05)
    sj = g_piles.normal(0, 1, (60, 3))
    stock = [card_plane(stock_x + sj[j, 0] * 0.012, y_piles + sj[j, 1] * 0.012 - j * 0.006,
                        ang0 + sj[j, 2] * 0.02, aspect) for j in range(min(int(spec["stock"]), 60))]
    pile_dx = g_piles.uniform(0, 0.5, 3)
    wj = g_piles.normal(0, 1, (3, 60, 3))
    waste = []
    for p, codes in enumerate(spec["waste"][:3]):
        wx = stock_x + side * (1.25 + p * 1.15 + pile_dx[p])
        waste.append([(code, card_plane(wx + wj[p, j, 0] * 0.05, y_piles + wj[p, j, 1] * 0.05, wj[p, j, 2] * 0.12,
                                        aspect)) for j, code in enumerate(codes[:60])])
    # loose face-up cards beside the pyramid (a discard pile, a card put aside)
    loose = []
    lx = side * g_loose.uniform(half_w + 0.3, half_w + 1.5)
    ly = g_loose.uniform(0, bottom)
    lj = g_loose.normal(0, 1, (60, 2))
    spin = g_loose.random() < 0.3
    la = g_loose.uniform(-np.pi, np.pi, 60) if spin else g_loose.normal(0, 0.2, 60)
    for j, code in enumerate(spec.get("loose", [])[:60]):
        loose.append((code, card_plane(lx + lj[j, 0] * 0.08 + (j // 3) * 1.3 * side, ly + lj[j, 1] * 0.08,
                                       la[j], aspect)))
    n_removed = sum(c is None for row in pyramid for c in row)
    # the camera frames the pyramid lattice and the pile places, whatever lies there right now
    anchors = [plane for row in slots for _, plane in row]
    anchors.append(card_plane(stock_x, y_piles, 0.0, aspect))
    for p in range(len(spec["waste"][:3])):
        anchors.append(card_plane(stock_x + side * (1.25 + p * 1.15 + pile_dx[p]), y_piles, 0.0, aspect))
    reserve, cells = [], []
    if reserve_codes or spec.get("cells"):
        (g_extra,) = rng.spawn(1)  # only variant layouts draw from it: plain scenes stay unchanged
        ej = g_extra.normal(0, 1, (40, 3))
        y_res = bottom + aspect * 0.25 + aspect / 2
        n = len(reserve_codes)
        for j, code in enumerate(reserve_codes):
            plane = card_plane((j - (n - 1) / 2) * dx * 0.95 + ej[j, 0] * jit_xy, y_res + ej[j, 1] * jit_xy,
                               float(np.clip(ej[j, 2] * jit_rot, -0.12, 0.12)), aspect)
            reserve.append((code, plane))
            anchors.append(plane)
        n_piles = max(1, len(spec["waste"][:3]))
        for j, code in enumerate(spec.get("cells", [])):
            cx = stock_x + side * (1.25 + (n_piles + j) * 1.15 + 0.3)
            plane = card_plane(cx + ej[20 + j, 0] * jit_xy, y_piles + ej[20 + j, 1] * jit_xy,
                               float(np.clip(ej[20 + j, 2] * jit_rot, -0.12, 0.12)), aspect)
            cells.append((code, plane))
            anchors.append(plane)
    return {"rows": rows, "slots": slots, "removed": n_removed, "stock": stock, "waste": waste,
            "loose": loose, "dx": dx, "dy": dy, "aspect": aspect, "anchors": anchors,
            "reserve": reserve, "cells": cells}


def camera_homography(rng: np.random.Generator, pts: np.ndarray, size: tuple[int, int],
                      hard: bool, close_up: bool = False) -> tuple[np.ndarray, dict]:
    """Plane -> image homography of a pinhole camera with tilt, layout rotation and scale.

    ``close_up``: the camera near the table, cards 130..420 px wide at 1280 and only part of the
    layout in view, like a phone photo of a few cards (the real photos' corners are twice the size
    of the biggest in a whole-table view; a detector that never saw such corners misses them)."""
    w, h = size
    if hard and rng.random() < 0.5:
        tilt = rng.uniform(30, 47)
    else:
        tilt = abs(rng.normal(0, 18)) if rng.random() < 0.8 else rng.uniform(0, 45)
    tilt = float(min(tilt, 48))
    yaw = float(rng.normal(0, 12))
    roll = float(rng.normal(0, 6) if rng.random() < 0.85 else rng.uniform(-180, 180))
    f = w * rng.uniform(0.6, 1.1)
    centre = (pts.min(0) + pts.max(0)) / 2
    rz = np.radians(roll)
    rz_m = np.array([[np.cos(rz), -np.sin(rz), 0], [np.sin(rz), np.cos(rz), 0], [0, 0, 1]])
    t = np.radians(tilt)
    rx = np.array([[1, 0, 0], [0, np.cos(t), -np.sin(t)], [0, np.sin(t), np.cos(t)]])
    yw = np.radians(yaw)
    rzy = np.array([[np.cos(yw), -np.sin(yw), 0], [np.sin(yw), np.cos(yw), 0], [0, 0, 1]])
    rot = rx @ rzy @ rz_m
    k = np.array([[f, 0, w / 2], [0, f, h / 2], [0, 0, 1]])

    def homography(scale: float, shift: np.ndarray) -> np.ndarray:
        # plane point p -> camera: rot @ (scale * (p - centre), 0) + (0, 0, 1)
        m = np.column_stack([rot[:, 0] * scale, rot[:, 1] * scale, [0, 0, 1]])
        tr = np.array([[1, 0, -centre[0]], [0, 1, -centre[1]], [0, 0, 1]])
        hm = k @ m @ tr
        sh = np.array([[1, 0, shift[0]], [0, 1, shift[1]], [0, 0, 1]])
        return sh @ hm

    # card width: 40..250 px at 1280 wide (scaled with the frame), never under MIN_CARD_PX: smaller
    # indices carry too few pixels to be named, and a layout that does not fit is then cut off instead
    lo_px, hi_px = (130, 420) if close_up else (40, 250)
    target = max(MIN_CARD_PX, float(np.exp(rng.uniform(np.log(lo_px), np.log(hi_px)))) * w / 1280)
    allow_partial = close_up or rng.random() < 0.12
    scale = target / f
    hm = homography(scale, np.zeros(2))
    if close_up:
        # A near camera tilted far puts the layout's far end at (or behind) the horizon: tilt less
        # until every point lies well in front of it (depth 1 at the layout's centre).
        for _ in range(20):
            if (np.column_stack([pts, np.ones(len(pts))]) @ hm.T)[:, 2].min() > 0.35:
                break
            tilt *= 0.8
            t = np.radians(tilt)
            rx = np.array([[1, 0, 0], [0, np.cos(t), -np.sin(t)], [0, np.sin(t), np.cos(t)]])
            rot = rx @ rzy @ rz_m
            hm = homography(scale, np.zeros(2))
    proj = project(hm, pts)
    ext = proj.max(0) - proj.min(0)
    if not allow_partial:
        fit = min((w * 0.96) / max(ext[0], 1), (h * 0.96) / max(ext[1], 1))
        if fit < 1:
            scale = max(scale * fit, MIN_CARD_PX / f)
            hm = homography(scale, np.zeros(2))
            proj = project(hm, pts)
        lo, hi = proj.min(0), proj.max(0)
        room_lo = -lo + [w * 0.01, h * 0.01]
        room_hi = [w * 0.99, h * 0.99] - hi
        shift = np.array([rng.uniform(min(room_lo[0], room_hi[0]), max(room_lo[0], room_hi[0])),
                          rng.uniform(min(room_lo[1], room_hi[1]), max(room_lo[1], room_hi[1]))])
    elif close_up:
        # a random layout point lands somewhere in the middle of the frame: always some cards in view
        anchor = proj[int(rng.integers(len(proj)))]
        shift = np.array([w * rng.uniform(0.25, 0.75), h * rng.uniform(0.25, 0.75)]) - anchor
    else:
        shift = rng.normal(0, [w * 0.1, h * 0.1])
    hm = homography(scale, shift)
    card_w = np.median(np.linalg.norm(np.diff(project(hm, pts[:2]), axis=0), axis=1))
    return hm, {"tilt_deg": round(float(tilt), 2), "yaw_deg": round(yaw, 2), "roll_deg": round(roll, 2),
                "focal_px": round(float(f), 1), "partial_view": bool(allow_partial),
                "close_up": bool(close_up)}


def project(hm: np.ndarray, pts: np.ndarray) -> np.ndarray:
    p = np.column_stack([pts, np.ones(len(pts))]) @ hm.T
    return p[:, :2] / p[:, 2:3]


def sub_quad(plane: np.ndarray, box: tuple[float, float, float, float]) -> np.ndarray:
    """Plane corners of the card-relative box (fractions x1, y1, x2, y2) on a card given by its corners."""
    tl, tr, br, bl = plane
    def at(u: float, v: float) -> np.ndarray:
        top = tl + (tr - tl) * u
        bot = bl + (br - bl) * u
        return top + (bot - top) * v
    x1, y1, x2, y2 = box
    return np.array([at(x1, y1), at(x2, y1), at(x2, y2), at(x1, y2)])


def shrink(tex: np.ndarray, quad: np.ndarray) -> np.ndarray:
    """Area-resample a texture down to about 1.3x its size in the frame, so the warp does not alias."""
    side = float(max(np.linalg.norm(quad[1] - quad[0]), np.linalg.norm(quad[2] - quad[1]) / 1.4))
    th, tw = tex.shape[:2]
    if tw > side * 1.6 and side > 4:
        nw = max(8, int(side * 1.3))
        return cv2.resize(tex, (nw, max(8, int(round(nw * th / tw)))), interpolation=cv2.INTER_AREA)
    return tex


class Canvas:
    """The frame being drawn, plus an owner map (which object is on top at each pixel)."""

    def __init__(self, img: np.ndarray):
        self.img = img
        self.h, self.w = img.shape[:2]
        self.owner = np.full((self.h, self.w), -1, np.int32)

    def paste(self, tex: np.ndarray, quad: np.ndarray, oid: int, shadow: tuple | None = None) -> None:
        """Warp a float BGRA texture onto the image quad (TL, TR, BR, BL)."""
        x0, y0 = np.floor(quad.min(0)).astype(int) - 2
        x1, y1 = np.ceil(quad.max(0)).astype(int) + 2
        if shadow is not None:
            off, blur, strength = shadow
            pad = int(blur * 3 + abs(off[0]) + abs(off[1])) + 2
            sx0, sy0 = max(0, x0 - pad), max(0, y0 - pad)
            sx1, sy1 = min(self.w, x1 + pad), min(self.h, y1 + pad)
            if sx1 > sx0 and sy1 > sy0:
                m = np.zeros((sy1 - sy0, sx1 - sx0), np.float32)
                cv2.fillConvexPoly(m, np.round((quad + off - [sx0, sy0]) * 4).astype(np.int32), 1.0,
                                   cv2.LINE_AA, shift=2)
                if blur > 0.3:
                    m = cv2.GaussianBlur(m, (0, 0), blur)
                self.img[sy0:sy1, sx0:sx1] *= (1 - strength * m)[:, :, None]
        cx0, cy0, cx1, cy1 = max(0, x0), max(0, y0), min(self.w, x1), min(self.h, y1)
        if cx1 <= cx0 or cy1 <= cy0:
            return
        th, tw = tex.shape[:2]
        src = np.array([[0, 0], [tw, 0], [tw, th], [0, th]], np.float32)
        dst = (quad - [cx0, cy0]).astype(np.float32)
        m = cv2.getPerspectiveTransform(src, dst)
        warped = cv2.warpPerspective(tex, m, (cx1 - cx0, cy1 - cy0), flags=cv2.INTER_LINEAR,
                                     borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0, 0))
        a = warped[:, :, 3:4] / 255.0
        roi = self.img[cy0:cy1, cx0:cx1]
        roi *= 1 - a
        roi += warped[:, :, :3] * a
        own = self.owner[cy0:cy1, cx0:cx1]
        own[a[:, :, 0] > 0.5] = oid

    def visible_fraction(self, quad: np.ndarray, oid: int) -> tuple[float, bool]:
        """Share of the quad's area that shows object ``oid`` (out-of-frame parts count as hidden)."""
        x0, y0 = np.floor(quad.min(0)).astype(int)
        x1, y1 = np.ceil(quad.max(0)).astype(int) + 1
        bw, bh = x1 - x0, y1 - y0
        if bw <= 0 or bh <= 0 or bw * bh > 16 * self.w * self.h:  # degenerate: at the horizon
            return 0.0, False
        m = np.zeros((bh, bw), np.uint8)
        cv2.fillConvexPoly(m, np.round(quad - [x0, y0]).astype(np.int32), 1)
        total = int(m.sum())
        if total == 0:
            return 0.0, False
        cx0, cy0, cx1, cy1 = max(0, x0), max(0, y0), min(self.w, x1), min(self.h, y1)
        in_frame = x0 >= 0 and y0 >= 0 and x1 <= self.w and y1 <= self.h
        if cx1 <= cx0 or cy1 <= cy0:
            return 0.0, False
        own = self.owner[cy0:cy1, cx0:cx1] == oid
        sub = m[cy0 - y0:cy1 - y0, cx0 - x0:cx1 - x0]
        return float((own & (sub > 0)).sum()) / total, in_frame


def render_scene(rng: np.random.Generator, deck: DeckArt, *, hard: bool = False,
                 back: np.ndarray | None = None, spec: dict | None = None,
                 geometry: np.random.Generator | None = None, p_variant: float = 0.0,
                 close_up: bool = False) -> SceneResult:
    """Render one frame with ``deck`` and return image, labels and truth.

    ``spec`` fixes which cards lie where (``{"pyramid": [[code|None]...], "waste": [[codes]...],
    "stock": n, "loose": [codes]}``; default: a random partly played deal). ``geometry`` (default:
    drawn from ``rng``) fixes frame size, slot positions and camera: pass generators seeded alike to
    render several frames of one table (a game) with changing cards and light. ``p_variant``: share
    of random specs given a rule-variant layout (inverted, face-down rows, reserve row, cells).
    ``close_up``: a camera near the table that sees part of the layout (see ``camera_homography``).
    """
    g_geo = geometry if geometry is not None else rng.spawn(1)[0]
    g_size, g_layout, g_cam = g_geo.spawn(3)
    sizes, probs = zip(*SIZES)
    w, h = sizes[int(g_size.choice(len(sizes), p=np.array(probs) / sum(probs)))]
    aspect = deck.aspect
    if spec is None:
        spec = random_spec(rng, rng.spawn(1)[0] if p_variant > 0 else None, p_variant)
    check_spec(spec)
    lay = build_layout(g_layout, aspect, deck.index_box, spec)
    objects: list[Placed] = []
    down = face_down_slots(spec)
    order = list(enumerate(lay["slots"]))
    if spec.get("form", "pyramid") == "inverted":
        order.reverse()  # the widest row lies on top of the screen, under the narrower ones
    for r, row in order:
        for i, (code, plane) in enumerate(row):
            objects.append(Placed(code, plane, f"pyramid:{r}:{i}", empty=code is None,
                                  face_down=(r, i) in down))
    for j, plane in enumerate(lay["stock"]):
        objects.append(Placed(None, plane, f"stock:{j}"))
    for p, pile in enumerate(lay["waste"]):
        for j, (code, plane) in enumerate(pile):
            objects.append(Placed(code, plane, f"waste:{p}:{j}"))
    for j, (code, plane) in enumerate(lay["loose"]):
        objects.append(Placed(code, plane, f"loose:{j}"))
    for kind in ("reserve", "cells"):
        for j, (code, plane) in enumerate(lay[kind]):
            objects.append(Placed(code, plane, f"{kind}:{j}", empty=code is None))
    for k, ob in enumerate(objects):
        ob.oid = k
    all_pts = np.concatenate(lay["anchors"])
    if close_up and lay["loose"]:  # a near camera must keep the loose cards in front of it too
        all_pts = np.concatenate([all_pts] + [plane for _, plane in lay["loose"]])
    hm, cam = camera_homography(g_cam, all_pts, (w, h), hard, close_up)
    for ob in objects:
        ob.quad = project(hm, ob.plane)

    # condition mix: hard scenes draw from dim / glare / blur / strong tilt
    light_mode = "normal"
    dim = False
    if hard:
        light_mode = str(rng.choice(["dim", "glare", "uneven", "normal"]))
    elif rng.random() < 0.35:
        light_mode = str(rng.choice(["dim", "glare", "uneven", "shadow"]))
    dim = light_mode == "dim"
    blur_mode = "none"
    p_blur = 0.5 if hard else 0.25
    if rng.random() < p_blur:
        blur_mode = "defocus" if rng.random() < 0.6 else "motion"

    bg, bg_kind = look.background(rng, h, w)
    canvas = Canvas(bg)
    pv = look.print_variation(rng)
    back_tex = back if back is not None else deck.back
    sh_dir = rng.normal(0, 1, 2)
    sh_dir /= max(1e-6, float(np.linalg.norm(sh_dir)))
    card_w = float(np.median([np.linalg.norm(ob.quad[1] - ob.quad[0]) for ob in objects]))
    shadow = (sh_dir * card_w * rng.uniform(0.0, 0.05), card_w * rng.uniform(0.02, 0.08), rng.uniform(0.15, 0.5))
    for ob in objects:
        if ob.empty:
            continue
        if ob.code is None or ob.face_down:
            tex = back_tex if back_tex is not None else np.full((int(300 * aspect), 300, 4), 200, np.uint8)
        else:
            tex = deck.faces[ob.code]
        canvas.paste(look.wear_card(rng, shrink(tex, ob.quad), pv), ob.quad, ob.oid, shadow)

    # hands reaching over the table
    hands = []
    n_hands = 0
    if rng.random() < (0.35 if hard else 0.22):
        n_hands = 1 if rng.random() < 0.8 else 2
    for _ in range(n_hands):
        drawn = [ob for ob in objects if not ob.empty]
        if not drawn:  # everything cleared away (a won table): no card for a hand to reach for
            break
        tgt_ob = drawn[int(rng.integers(len(drawn)))]
        tx, ty = tgt_ob.quad.mean(0) + rng.normal(0, card_w * 0.5, 2)
        colour, alpha = look.draw_hand(rng, h, w, (float(tx), float(ty)), card_w * rng.uniform(1.2, 2.2))
        # soft shadow under the hand
        small = cv2.resize(np.roll(alpha, (int(card_w * 0.15), int(card_w * 0.1)), (0, 1)), (w // 4, h // 4),
                           interpolation=cv2.INTER_AREA)
        sha = cv2.resize(cv2.GaussianBlur(small, (0, 0), card_w * 0.04 + 0.5), (w, h))
        canvas.img *= (1 - 0.35 * sha)[:, :, None]
        canvas.img *= 1 - alpha[:, :, None]
        canvas.img += colour * alpha[:, :, None]
        canvas.owner[alpha > 0.4] = HAND_ID
        ys, xs = np.nonzero(alpha > 0.4)
        if len(xs):
            hands.append({"box": [int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1]})

    # labels from the owner map (before photometric effects, which do not move anything)
    labels: list[dict] = []
    corner_info: dict[int, list[dict]] = {}
    ib = deck.index_box
    boxes = {"tl": ib, "br": (1 - ib[2], 1 - ib[3], 1 - ib[0], 1 - ib[1])}
    for ob in objects:
        if ob.code is None or ob.face_down:
            continue
        infos = []
        for which, frac in boxes.items():
            cq = project(hm, sub_quad(ob.plane, frac))
            vis, in_frame = canvas.visible_fraction(cq, ob.oid)
            x1, y1 = cq.min(0)
            x2, y2 = cq.max(0)
            cb = [max(0.0, float(x1)), max(0.0, float(y1)), min(float(w), float(x2)), min(float(h), float(y2))]
            ok = vis >= VISIBLE_MIN and cb[2] - cb[0] >= 2 and cb[3] - cb[1] >= 2
            info = {"which": which, "box": [round(v, 2) for v in cb], "quad": np.round(cq, 2).tolist(),
                    "visible": bool(ok), "visible_fraction": round(vis, 3), "in_frame": bool(in_frame)}
            infos.append(info)
            if ok:
                labels.append({"cls": Card.parse(ob.code).index, "card": ob.code, "box": info["box"],
                               "where": ob.where, "which": which, "quad": info["quad"]})
        corner_info[ob.oid] = infos

    # light, optics, sensor
    img = canvas.img
    light = look.lighting(rng, img, light_mode)
    img, cam_fx = look.camera(rng, img, blur_mode, dim)
    img8 = img.astype(np.uint8)
    jpeg, quality = look.encode_jpeg(rng, img8)

    truth = _truth(lay, spec, objects, corner_info, labels, hands, w, h)
    truth["deck"] = deck.name
    hard_flag = bool(hard or cam["tilt_deg"] >= 35 or dim or light.get("glare", False)
                     or (blur_mode == "motion") or cam_fx["blur_px"] >= 1.1)
    truth["conditions"] = {
        **cam, "card_width_px": round(card_w, 1), "light": light_mode, **light, **cam_fx,
        "jpeg_quality": quality, "hands": len(hands), "partial": lay["removed"] > 0,
        "removed": lay["removed"], "background": bg_kind, "waste_piles": len(lay["waste"]),
        "loose": len(lay["loose"]), "hard": hard_flag, "hard_mix": bool(hard),
        "row_gap": round(float(lay["dx"] - 1), 3), "row_step": round(float(lay["dy"] / aspect), 3),
    }
    variant = [k for k, on in (("inverted", spec.get("form") == "inverted"),
                               ("face_down", bool(spec.get("face_down_rows"))),
                               ("reserve", bool(spec.get("reserve"))), ("cells", bool(spec.get("cells")))) if on]
    if variant:
        truth["conditions"]["variant"] = "+".join(variant)
    return SceneResult(img8, jpeg, labels, truth)


def _truth(lay: dict, spec: dict, objects: list[Placed], corner_info: dict, labels: list[dict],
           hands: list[dict], w: int, h: int) -> dict:
    by_where = {ob.where: ob for ob in objects}
    pyramid = []
    for r, row in enumerate(lay["slots"]):
        out_row = []
        for i, (code, _) in enumerate(row):
            ob = by_where[f"pyramid:{r}:{i}"]
            slot = {"card": code, "quad": np.round(ob.quad, 2).tolist(),
                    "center": np.round(ob.quad.mean(0), 2).tolist(),
                    "corners": corner_info.get(ob.oid, [])}
            if ob.face_down:
                slot["face_down"] = True
            out_row.append(slot)
        pyramid.append(out_row)
    waste = []
    for p, pile in enumerate(lay["waste"]):
        cards = [c for c, _ in pile]
        top = by_where.get(f"waste:{p}:{len(pile) - 1}") if pile else None
        waste.append({"cards": cards, "top": cards[-1] if cards else None,
                      "quad": None if top is None else np.round(top.quad, 2).tolist()})
    stock_top = by_where.get(f"stock:{len(lay['stock']) - 1}") if lay["stock"] else None
    loose = []
    for j, (code, _) in enumerate(lay["loose"]):
        ob = by_where[f"loose:{j}"]
        loose.append({"card": code, "quad": np.round(ob.quad, 2).tolist(), "corners": corner_info.get(ob.oid, [])})
    out = {
        "version": TRUTH_VERSION, "width": w, "height": h, "form": spec.get("form", "pyramid"), "rows": lay["rows"],
        "pyramid": pyramid, "pyramid_codes": [[s["card"] for s in row] for row in pyramid],
        "waste": waste,
        "stock": {"present": bool(lay["stock"]), "count": len(lay["stock"]),
                  "quad": None if stock_top is None else np.round(stock_top.quad, 2).tolist()},
        "loose": loose, "labels": labels, "hands": hands,
    }
    # variant parts appear only when the spec has them (plain scenes keep their exact bytes)
    if spec.get("form") == "inverted":
        out["inverted"] = True  # same as form == "inverted" (Rules.inverted spelling)
    if spec.get("face_down_rows"):
        out["face_down_rows"] = int(spec["face_down_rows"])
    for kind in ("reserve", "cells"):
        if kind in spec:
            out[kind] = []
            for j, (code, _) in enumerate(lay[kind]):
                ob = by_where[f"{kind}:{j}"]
                out[kind].append({"card": code, "quad": np.round(ob.quad, 2).tolist(),
                                  "corners": corner_info.get(ob.oid, [])})
    return out
