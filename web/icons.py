"""The app's icons, drawn with the standard library: an arrow dropping into a tray.

`python web/icons.py` writes web/static/icons/*.png (committed; tests/unit/test_web_icons.py
checks they are what this script draws). Shapes are signed distance functions, so every pixel
gets its exact anti-aliased coverage without supersampling.
"""

from __future__ import annotations

import math
import struct
import zlib
from pathlib import Path

OUT = Path(__file__).parent / "static" / "icons"
BACKGROUND = (15, 76, 129)  # the theme colour of the manifest, #0f4c81
GLYPH = (255, 255, 255)

# name: (size in px, maskable). Maskable icons are full bleed; the platform crops them to
# any shape inside the centre circle of 80 % diameter, so their glyph is drawn smaller.
ICONS = {
    "icon-192.png": (192, False),
    "icon-512.png": (512, False),
    "icon-maskable-512.png": (512, True),
    "apple-touch-icon.png": (180, True),  # iOS rounds the corners itself
}


def _segment(px: float, py: float, ax: float, ay: float, bx: float, by: float) -> float:
    """Distance from p to the segment a-b."""
    dx, dy = bx - ax, by - ay
    t = max(0.0, min(1.0, ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy)))
    return math.hypot(px - ax - t * dx, py - ay - t * dy)


def _rounded_square(px: float, py: float, radius: float) -> float:
    """Signed distance to the unit square [0, 1]² with rounded corners."""
    qx = abs(px - 0.5) - 0.5 + radius
    qy = abs(py - 0.5) - 0.5 + radius
    outside = math.hypot(max(qx, 0.0), max(qy, 0.0))
    return outside + min(max(qx, qy), 0.0) - radius


def _glyph(px: float, py: float) -> float:
    """Signed distance to the glyph, in a unit square: an arrow into an open tray."""
    strokes = [
        (0.5, 0.2, 0.5, 0.58),  # the arrow's shaft
        (0.36, 0.45, 0.5, 0.59),  # and its head
        (0.64, 0.45, 0.5, 0.59),
        (0.24, 0.6, 0.24, 0.78),  # the tray
        (0.24, 0.78, 0.76, 0.78),
        (0.76, 0.78, 0.76, 0.6),
    ]
    return min(_segment(px, py, *s) for s in strokes) - 0.045


def _coverage(distance: float, pixel: float) -> float:
    """How much of a pixel a shape covers, from the signed distance at the pixel's centre."""
    return max(0.0, min(1.0, 0.5 - distance / pixel))


def draw(size: int, maskable: bool) -> bytes:
    """The icon as PNG bytes (8-bit RGBA)."""
    pixel = 1.0 / size
    # A maskable icon's glyph stays inside the safe circle; a plain one fills most of it.
    scale = 0.72 if maskable else 0.9
    rows = []
    for j in range(size):
        row = bytearray([0])  # PNG filter type 0 (none) for each scanline
        y = (j + 0.5) * pixel
        for i in range(size):
            x = (i + 0.5) * pixel
            back = 1.0 if maskable else _coverage(_rounded_square(x, y, 0.22), pixel)
            gx, gy = (x - 0.5) / scale + 0.5, (y - 0.5) / scale + 0.5
            ink = _coverage(_glyph(gx, gy) * scale, pixel) * back
            rgb = (round(b + (g - b) * ink) for b, g in zip(BACKGROUND, GLYPH, strict=True))
            row += bytes([*rgb, round(255 * back)])
        rows.append(bytes(row))
    return _png(size, size, b"".join(rows))


def _png(width: int, height: int, raw: bytes) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)  # 8-bit RGBA
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, (size, maskable) in ICONS.items():
        (OUT / name).write_bytes(draw(size, maskable))
        print(f"wrote {OUT / name}")


if __name__ == "__main__":
    main()
