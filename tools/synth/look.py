"""How the table and the camera look: backgrounds, card wear, hands, light, blur, noise.

Every function takes the scene's ``numpy.random.Generator`` explicitly. Images are float32 BGR in
0..255 until the final JPEG encoding (``encode_jpeg``).
"""

from __future__ import annotations

import cv2
import numpy as np

SKIN_TONES = [  # BGR, light to dark
    (190, 205, 240), (160, 185, 230), (130, 160, 215), (110, 140, 195), (80, 110, 160),
    (60, 85, 130), (45, 60, 95), (140, 170, 225), (120, 150, 205),
]


def smooth_noise(rng: np.random.Generator, h: int, w: int, scale: float) -> np.ndarray:
    """Zero-mean, unit-ish noise smoothed to features of about ``scale`` pixels."""
    sh, sw = max(2, int(h / scale) + 2), max(2, int(w / scale) + 2)
    small = rng.standard_normal((sh, sw)).astype(np.float32)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC)


def background(rng: np.random.Generator, h: int, w: int) -> tuple[np.ndarray, str]:
    """A table surface with some clutter, drawn at half resolution and scaled up (speed; the camera
    blurs and re-noises it anyway)."""
    img, kind = _background(rng, max(8, h // 2), max(8, w // 2))
    img = cv2.resize(img, (w, h), interpolation=cv2.INTER_LINEAR)
    return img, kind


def _background(rng: np.random.Generator, h: int, w: int) -> tuple[np.ndarray, str]:
    kind = str(rng.choice(["wood", "wood", "felt", "cloth", "plain", "pattern", "stone"]))
    if kind == "wood":
        base = np.array(rng.choice([[40, 80, 140], [60, 110, 170], [30, 55, 95], [90, 140, 190],
                                    [120, 160, 200]]), np.float32) * rng.uniform(0.7, 1.2)
        ang = rng.uniform(0, np.pi) if rng.random() < 0.3 else rng.choice([0, np.pi / 2]) + rng.normal(0, 0.05)
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        u = xx * np.cos(ang) + yy * np.sin(ang)
        v = -xx * np.sin(ang) + yy * np.cos(ang)
        warp = smooth_noise(rng, h, w, rng.uniform(40, 150)) * rng.uniform(3, 12)
        grain = np.sin((v + warp) * rng.uniform(0.1, 0.6)) * 0.5 + 0.5
        streak = smooth_noise(rng, h, w, 3) * 0.3
        tone = 1 + 0.25 * (grain - 0.5) + 0.06 * streak + 0.05 * smooth_noise(rng, h, w, 100)
        # plank seams
        if rng.random() < 0.5:
            period = rng.uniform(60, 200)
            tone *= np.where((v % period) < rng.uniform(1.5, 4), 0.55, 1.0)
        del u
        img = tone[:, :, None] * base
    elif kind == "felt":
        base = np.array(rng.choice([[40, 110, 30], [90, 60, 20], [30, 30, 120], [60, 60, 60], [30, 80, 20],
                                    [110, 70, 40]]), np.float32) * rng.uniform(0.6, 1.3)
        tone = 1 + 0.05 * rng.standard_normal((h, w), dtype=np.float32) + 0.06 * smooth_noise(rng, h, w, 30)
        img = tone[:, :, None] * base
    elif kind == "cloth":
        base = rng.uniform(40, 230, 3).astype(np.float32)
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        p = rng.uniform(1.5, 4)
        weave = 0.5 + 0.25 * np.sin(xx * 2 * np.pi / p) * np.sin(yy * 2 * np.pi / p)
        tone = 0.85 + 0.3 * weave + 0.05 * smooth_noise(rng, h, w, 50)
        img = tone[:, :, None] * base
    elif kind == "pattern":
        c1, c2 = rng.uniform(30, 240, 3), rng.uniform(30, 240, 3)
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        ang = rng.uniform(0, np.pi)
        period = rng.uniform(10, 80)
        u = xx * np.cos(ang) + yy * np.sin(ang)
        v = -xx * np.sin(ang) + yy * np.cos(ang)
        m = ((u // period) % 2).astype(np.float32)
        if rng.random() < 0.5:
            m = ((u // period + v // period) % 2).astype(np.float32)
        m = cv2.GaussianBlur(m, (0, 0), 1.0)
        img = m[:, :, None] * c1 + (1 - m[:, :, None]) * c2
    elif kind == "stone":
        base = rng.uniform(60, 220, 3).astype(np.float32)
        tone = 1 + 0.12 * smooth_noise(rng, h, w, 20) + 0.08 * smooth_noise(rng, h, w, 4) \
            + 0.04 * rng.standard_normal((h, w), dtype=np.float32)
        img = tone[:, :, None] * base
    else:
        base = rng.uniform(20, 240, 3).astype(np.float32)
        img = np.broadcast_to(base, (h, w, 3)) * (1 + 0.03 * smooth_noise(rng, h, w, 150))[:, :, None]
    img = np.ascontiguousarray(img, dtype=np.float32)
    clutter(rng, img)
    return np.clip(img, 0, 255), kind


def clutter(rng: np.random.Generator, img: np.ndarray) -> None:
    """Things on a real table: paper, a mug ring, pens, printed words (no card indices)."""
    h, w = img.shape[:2]
    for _ in range(int(rng.poisson(1.2))):
        c = tuple(float(v) for v in rng.uniform(0, 255, 3))
        kind = rng.integers(4)
        x, y = int(rng.uniform(0, w)), int(rng.uniform(0, h))
        if kind == 0:  # paper sheet / box
            pts = cv2.boxPoints(((x, y), (rng.uniform(25, 200), rng.uniform(25, 200)), rng.uniform(0, 180)))
            cv2.fillConvexPoly(img, pts.astype(np.int32), c, cv2.LINE_AA)
        elif kind == 1:  # mug / coaster
            cv2.circle(img, (x, y), int(rng.uniform(10, 45)), c, -1 if rng.random() < 0.5 else int(rng.uniform(1, 5)),
                       cv2.LINE_AA)
        elif kind == 2:  # pen
            ang = rng.uniform(0, np.pi)
            length = rng.uniform(30, 125)
            p2 = (int(x + length * np.cos(ang)), int(y + length * np.sin(ang)))
            cv2.line(img, (x, y), p2, c, int(rng.uniform(2, 7)), cv2.LINE_AA)
        else:  # printed text: letters and digits that are NOT card indices in a card's corner
            words = ["SCORE", "notes", "Pyramid", "2024", "TEA", "menu", "ABC", "hello", "No. 7", "Q&A"]
            m = np.zeros(img.shape[:2], np.uint8)
            cv2.putText(m, str(rng.choice(words)), (x, y), int(rng.choice([0, 2, 3, 4])), rng.uniform(0.3, 1.25), 255,
                        int(rng.uniform(1, 3)), cv2.LINE_AA)
            a = (m.astype(np.float32) / 255)[:, :, None]
            img *= 1 - a
            img += a * np.array(c, np.float32)


def print_variation(rng: np.random.Generator) -> dict:
    """Per-deck printing differences: ink hue/saturation, paper tint, contrast, gloss."""
    return {
        "gain": rng.normal(1.0, 0.04, 3).astype(np.float32),
        "paper": rng.normal(0, 6, 3).astype(np.float32),
        "contrast": float(rng.uniform(0.8, 1.05)),
        "gloss": float(rng.uniform(0, 0.25)) if rng.random() < 0.5 else 0.0,
        "wear": float(rng.uniform(0, 1)) if rng.random() < 0.4 else 0.0,
        "soft": float(rng.uniform(0, 1.2)),
    }


def wear_card(rng: np.random.Generator, face: np.ndarray, pv: dict) -> np.ndarray:
    """Apply printing variation and per-card wear/gloss to a BGRA texture (returns float32 BGRA)."""
    img = face.astype(np.float32)
    bgr = img[:, :, :3]
    bgr = (bgr - 128) * pv["contrast"] + 128 + pv["paper"]
    bgr *= pv["gain"] * rng.normal(1.0, 0.02)
    h, w = bgr.shape[:2]
    if pv["soft"] > 0.3:
        bgr = cv2.GaussianBlur(bgr, (0, 0), pv["soft"] * w / 300)
    if pv["wear"] > 0:
        # dirt and scuffs: a few faint strokes and a greyish smooth layer
        dirt = smooth_noise(rng, h, w, w / 6) * 6 * pv["wear"]
        bgr -= np.abs(dirt)[:, :, None]
        for _ in range(int(rng.integers(0, 4))):
            p1 = (int(rng.uniform(0, w)), int(rng.uniform(0, h)))
            p2 = (int(p1[0] + rng.normal(0, w / 4)), int(p1[1] + rng.normal(0, h / 4)))
            cv2.line(bgr, p1, p2, (200, 200, 200), 1, cv2.LINE_AA)
    if pv["gloss"] > 0:
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        ang = rng.uniform(0, 2 * np.pi)
        ramp = (xx / w * np.cos(ang) + yy / h * np.sin(ang))
        ramp = np.clip(1 - np.abs(ramp - rng.uniform(-0.2, 1.2)) * 3, 0, 1)
        bgr += (ramp * 255 * pv["gloss"])[:, :, None]
    img[:, :, :3] = np.clip(bgr, 0, 255)
    return img


def draw_hand(rng: np.random.Generator, h: int, w: int, target: tuple[float, float],
              size: float) -> tuple[np.ndarray, np.ndarray]:
    """A hand reaching from a frame edge to ``target``: (colour BGR float32, alpha 0..1)."""
    alpha = np.zeros((h, w), np.float32)
    edge = rng.choice(["bottom", "bottom", "right", "left", "top"])
    tx, ty = target
    if edge == "bottom":
        sx, sy = tx + rng.normal(0, w * 0.15), h + size
    elif edge == "top":
        sx, sy = tx + rng.normal(0, w * 0.15), -size
    elif edge == "left":
        sx, sy = -size, ty + rng.normal(0, h * 0.15)
    else:
        sx, sy = w + size, ty + rng.normal(0, h * 0.15)
    d = np.array([tx - sx, ty - sy], np.float32)
    d /= max(1e-6, float(np.linalg.norm(d)))
    n = np.array([-d[1], d[0]])
    palm_c = np.array([tx, ty]) - d * size * rng.uniform(0.3, 0.8)
    # forearm: a tapered band from the frame edge to the wrist
    arm_w = size * rng.uniform(0.55, 0.75)
    wrist = palm_c - d * size * 0.3
    far_w = arm_w * rng.uniform(1.1, 1.5)
    arm = np.array([wrist + n * arm_w / 2, wrist - n * arm_w / 2,
                    np.array([sx, sy]) - n * far_w / 2, np.array([sx, sy]) + n * far_w / 2])
    cv2.fillConvexPoly(alpha, np.round(arm * 4).astype(np.int32), 1.0, cv2.LINE_AA, shift=2)
    # palm
    ang = float(np.degrees(np.arctan2(d[1], d[0])))
    cv2.ellipse(alpha, (int(palm_c[0]), int(palm_c[1])), (int(size * 0.55), int(size * 0.45)), ang, 0, 360, 1.0, -1,
                cv2.LINE_AA)
    # fingers: some extended towards the target, some curled
    fw = max(2, int(size * rng.uniform(0.14, 0.19)))
    for k, off in enumerate(np.linspace(-0.35, 0.35, 4)):
        length = size * rng.uniform(0.45, 0.95) * (0.85 if k in (0, 3) else 1.0)
        spread = rng.normal(0, 0.12)
        dirv = d + n * (off * 0.6 + spread)
        dirv /= np.linalg.norm(dirv)
        base = palm_c + d * size * 0.35 + n * off * size
        tip = base + dirv * length
        cv2.line(alpha, (int(base[0]), int(base[1])), (int(tip[0]), int(tip[1])), 1.0, fw, cv2.LINE_AA)
    thumb_side = 1 if rng.random() < 0.5 else -1
    tb = palm_c + n * thumb_side * size * 0.45
    tt = tb + (d * 0.6 + n * thumb_side * 0.7) * size * rng.uniform(0.4, 0.7)
    cv2.line(alpha, (int(tb[0]), int(tb[1])), (int(tt[0]), int(tt[1])), 1.0, int(fw * 1.2), cv2.LINE_AA)
    alpha = cv2.GaussianBlur(alpha, (0, 0), max(0.8, size * 0.01))
    tone = np.array(SKIN_TONES[int(rng.integers(len(SKIN_TONES)))], np.float32) * rng.uniform(0.85, 1.1)
    shade = 1 + 0.12 * smooth_noise(rng, h, w, size * 0.5)
    # rounded look: darker towards the silhouette
    inner = cv2.GaussianBlur(alpha, (0, 0), max(1.0, size * 0.06))
    shade *= 0.75 + 0.3 * np.clip(inner, 0, 1)
    colour = shade[:, :, None] * tone
    if rng.random() < 0.3:  # a sleeve
        sleeve = np.zeros_like(alpha)
        mid = (np.array([sx, sy]) + palm_c) / 2 - d * size * 0.3
        cv2.line(sleeve, (int(sx), int(sy)), (int(mid[0]), int(mid[1])), 1.0, int(arm_w * 1.3), cv2.LINE_AA)
        sc = rng.uniform(10, 240, 3).astype(np.float32)
        colour = np.where(sleeve[:, :, None] > 0.5, sc * shade[:, :, None], colour)
        alpha = np.maximum(alpha, cv2.GaussianBlur(sleeve, (0, 0), 1.0))
    return colour.astype(np.float32), np.clip(alpha, 0, 1)


def lighting(rng: np.random.Generator, img: np.ndarray, mode: str) -> dict:
    """Uneven light, colour cast, glare; in place. Returns the parameters used.

    The light field is smooth, so it is computed at 1/8 resolution and scaled up (speed).
    """
    h, w = img.shape[:2]
    sh, sw = max(4, h // 8), max(4, w // 8)
    info: dict = {}
    yy, xx = np.mgrid[0:sh, 0:sw].astype(np.float32)
    xx, yy = xx / sw, yy / sh
    # smooth illumination field: a linear falloff plus a soft lamp spot
    ang = rng.uniform(0, 2 * np.pi)
    strength = rng.uniform(0.0, 0.25) if mode != "uneven" else rng.uniform(0.3, 0.6)
    lin = 1 + strength * ((xx - 0.5) * np.cos(ang) + (yy - 0.5) * np.sin(ang)) * 2
    cx, cy = rng.uniform(-0.2, 1.2), rng.uniform(-0.2, 1.2)
    rad = rng.uniform(0.3, 1.0)
    spot = np.exp(-((xx - cx) ** 2 + ((yy - cy) * h / w) ** 2) / (2 * rad ** 2))
    field = lin * (1 - strength * 0.5 + strength * spot)
    # vignetting of a cheap lens
    vig = rng.uniform(0.0, 0.35)
    field *= 1 - vig * ((xx - 0.5) ** 2 + (yy - 0.5) ** 2) * 2
    if mode == "shadow" or rng.random() < 0.1:
        # a big soft cast shadow (a person leaning over the table)
        m = np.zeros((sh, sw), np.float32)
        pts = (rng.uniform(0, 1, (5, 2)) * [sw, sh]).astype(np.int32)
        cv2.fillConvexPoly(m, cv2.convexHull(pts), 1.0)
        m = cv2.GaussianBlur(m, (0, 0), rng.uniform(20, 60) / 8)
        field *= 1 - rng.uniform(0.3, 0.6) * m
        info["cast_shadow"] = True
    # colour temperature / white balance error
    wb = np.array([rng.normal(1, 0.08), rng.normal(1, 0.04), rng.normal(1, 0.08)], np.float32)
    if rng.random() < 0.3:  # warm tungsten light
        wb *= np.array([0.75, 0.92, 1.12], np.float32)
    field = cv2.resize(field.astype(np.float32), (w, h), interpolation=cv2.INTER_LINEAR)
    img *= field[:, :, None] * wb
    info["wb"] = [round(float(v), 3) for v in wb]
    info["uneven"] = round(float(strength), 3)
    if mode == "glare" or rng.random() < 0.08:
        g = np.zeros((h // 4, w // 4), np.float32)
        for _ in range(int(rng.integers(1, 3))):
            gx, gy = rng.uniform(0.1, 0.9) * w / 4, rng.uniform(0.1, 0.9) * h / 4
            axes = (int(rng.uniform(0.04, 0.2) * w / 4) + 1, int(rng.uniform(0.02, 0.1) * w / 4) + 1)
            one = np.zeros_like(g)
            cv2.ellipse(one, (int(gx), int(gy)), axes, rng.uniform(0, 180), 0, 360, 1.0, -1)
            g += cv2.GaussianBlur(one, (0, 0), axes[1] * rng.uniform(0.3, 0.8) + 0.5) * rng.uniform(60, 160)
        img += cv2.resize(g, (w, h), interpolation=cv2.INTER_LINEAR)[:, :, None]
        info["glare"] = True
    return info


def camera(rng: np.random.Generator, img: np.ndarray, blur_mode: str, dim: bool) -> tuple[np.ndarray, dict]:
    """Optics and sensor: defocus/motion blur, resolution loss, exposure, noise."""
    h, w = img.shape[:2]
    info: dict = {}
    blur_px = 0.0
    if blur_mode == "defocus":
        blur_px = float(rng.uniform(0.5, 1.3))
        img = cv2.GaussianBlur(img, (0, 0), blur_px)
    elif blur_mode == "motion":
        blur_px = float(rng.uniform(2, 5))
        k = int(np.ceil(blur_px)) | 1
        kernel = np.zeros((k, k), np.float32)
        kernel[k // 2, :] = 1
        rot = cv2.getRotationMatrix2D((k / 2 - 0.5, k / 2 - 0.5), rng.uniform(0, 180), 1.0)
        kernel = cv2.warpAffine(kernel, rot, (k, k))
        img = cv2.filter2D(img, -1, kernel / max(1e-6, kernel.sum()))
    elif rng.random() < 0.5:
        img = cv2.GaussianBlur(img, (0, 0), rng.uniform(0.3, 0.6))
    info["blur"] = blur_mode
    info["blur_px"] = round(blur_px, 2)
    # webcam sensors resolve less than their stream size
    if rng.random() < 0.5:
        f = rng.uniform(0.7, 1.0)
        small = cv2.resize(img, (max(8, int(w * f)), max(8, int(h * f))), interpolation=cv2.INTER_AREA)
        img = cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)
    # exposure: dim scenes are amplified by the camera's auto gain, noise and all
    if dim:
        light = float(rng.uniform(0.12, 0.35))
        gain = float(rng.uniform(0.5, 0.9)) / light
    else:
        light = float(rng.uniform(0.7, 1.15))
        gain = 1.0
    img = img * np.float32(light)
    shot = np.sqrt(np.maximum(img, 0) * np.float32(rng.uniform(0.1, 0.6)))
    read = rng.uniform(1.0, 3.5)
    noise = rng.standard_normal(img.shape, dtype=np.float32)
    noise *= shot
    noise += rng.standard_normal((h, w, 1), dtype=np.float32) * np.float32(read)
    img += noise
    img *= np.float32(gain)
    info["brightness"] = round(light, 3)
    info["noise"] = round(float(read * gain), 2)
    if rng.random() < 0.3:  # gamma / contrast curve of the camera
        g = rng.uniform(0.8, 1.25)
        img = 255 * (np.clip(img, 0, 255) / 255) ** g
    return np.clip(img, 0, 255), info


def encode_jpeg(rng: np.random.Generator, img: np.ndarray) -> tuple[bytes, int]:
    q = int(rng.integers(50, 96))
    ok, buf = cv2.imencode(".jpg", img.astype(np.uint8), [cv2.IMWRITE_JPEG_QUALITY, q])
    if not ok:
        raise RuntimeError("JPEG encoding failed")
    return buf.tobytes(), q
