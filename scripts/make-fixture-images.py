#!/usr/bin/env python3
"""Draws the fixture corpus's images and embeds them in Fixtures/corpus/*.json.

Deterministic: pure arithmetic, PNG written by hand (zlib level 9), no image library. Each image
is written to Fixtures/images/<name>, and every file object in a corpus JSON that carries
"fixture": "<name>" gets that image's base64, so the JSON stays what `phone forward --file` reads.

    scripts/make-fixture-images.py          # rewrite the images and the base64 in the corpus
    scripts/make-fixture-images.py --check  # exit 1 if anything is out of date
"""
import base64
import math
import pathlib
import re
import struct
import sys
import zlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
IMAGES = ROOT / "Fixtures" / "images"
CORPUS = ROOT / "Fixtures" / "corpus"
# Samples per pixel edge: 4×4 supersampling smooths the edges of the shapes.
SUPERSAMPLE = 4


def png(width, height, rows, alpha):
    """rows: height lists of width (r, g, b[, a]) tuples. Each row takes the filter with the
    smallest sum of absolute values, the usual heuristic, so gradients compress well."""
    channels = 4 if alpha else 3
    raw = bytearray()
    previous = bytes(width * channels)
    for row in rows:
        line = bytes(value for pixel in row for value in pixel[:channels])
        candidates = [
            (0, line),
            (1, bytes((line[i] - (line[i - channels] if i >= channels else 0)) & 0xFF for i in range(len(line)))),
            (2, bytes((line[i] - previous[i]) & 0xFF for i in range(len(line)))),
        ]
        kind, data = min(candidates, key=lambda c: sum(b if b < 128 else 256 - b for b in c[1]))
        raw.append(kind)
        raw += data
        previous = line

    def chunk(tag, body):
        return struct.pack(">I", len(body)) + tag + body + struct.pack(">I", zlib.crc32(tag + body))

    header = struct.pack(">IIBBBBB", width, height, 8, 6 if alpha else 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(bytes(raw), 9)) + chunk(b"IEND", b"")


def render(width, height, shade, alpha=True):
    """shade(x, y) -> (r, g, b, a) at a point in [0, width) × [0, height), averaged per pixel."""
    rows = []
    n = SUPERSAMPLE
    for py in range(height):
        row = []
        for px in range(width):
            total = [0.0, 0.0, 0.0, 0.0]
            for sy in range(n):
                for sx in range(n):
                    r, g, b, a = shade(px + (sx + 0.5) / n, py + (sy + 0.5) / n)
                    total[0] += r * a
                    total[1] += g * a
                    total[2] += b * a
                    total[3] += a
            coverage = total[3]
            if coverage == 0:
                row.append((0, 0, 0, 0))
            else:
                row.append(tuple(int(round(c / coverage)) for c in total[:3]) + (int(round(255 * coverage / (n * n))),))
        rows.append(row)
    return png(width, height, rows, alpha)


def mix(c1, c2, t):
    return tuple(a + (b - a) * t for a, b in zip(c1, c2))


def rounded_square(x, y, size, radius):
    dx = max(radius - x, 0, x - (size - radius))
    dy = max(radius - y, 0, y - (size - radius))
    return dx * dx + dy * dy <= radius * radius


def app_icon(size, top, bottom, glyph):
    def shade(x, y):
        if not rounded_square(x, y, size, size * 0.225):
            return (0, 0, 0, 0)
        if glyph(x / size, y / size):
            return (255, 255, 255, 1)
        return mix(top, bottom, y / size) + (1,)
    return render(size, size, shade)


def speech_bubble(u, v):
    inside = ((u - 0.5) / 0.34) ** 2 + ((v - 0.46) / 0.27) ** 2 <= 1
    tail = 0.24 <= u <= 0.40 and 0.62 <= v <= 0.80 and (u - 0.24) >= (v - 0.62) * 0.9
    return inside or tail


def envelope(u, v):
    if not (0.18 <= u <= 0.82 and 0.28 <= v <= 0.72):
        return False
    on_edge = u < 0.22 or u > 0.78 or v < 0.32 or v > 0.68
    # The flap: a V from the top corners down to the middle.
    fold = abs((v - 0.30) - (0.5 - abs(u - 0.5)) * 0.62) < 0.035
    return on_edge or fold


def avatar(size, colour):
    """A contact placeholder: a circle with a head and shoulders, as iOS shows without a photo."""
    def shade(x, y):
        u, v = x / size, y / size
        if (u - 0.5) ** 2 + (v - 0.5) ** 2 > 0.25:
            return (0, 0, 0, 0)
        head = (u - 0.5) ** 2 + (v - 0.40) ** 2 <= 0.17 ** 2
        body = (u - 0.5) ** 2 + ((v - 0.98) / 1.1) ** 2 <= 0.33 ** 2
        if head or body:
            return (250, 250, 252, 1)
        return mix(colour, (colour[0] * 0.7, colour[1] * 0.7, colour[2] * 0.7), v) + (1,)
    return render(size, size, shade)


def harbour_photo(width, height):
    """A sunset over water: sky gradient, sun disc, a dark headland and rippled reflections."""
    horizon = height * 0.62

    def shade(x, y):
        if y < horizon:
            sky = mix((38, 52, 120), (250, 150, 80), (y / horizon) ** 1.4)
            sun = math.hypot(x - width * 0.68, y - horizon * 0.78)
            if sun < height * 0.11:
                return (255, 226, 140, 1)
            glow = max(0.0, 1 - sun / (height * 0.45))
            sky = mix(sky, (255, 200, 120), glow * 0.6)
            hill = horizon - height * 0.10 * math.exp(-((x - width * 0.2) / (width * 0.18)) ** 2)
            if y > hill:
                return (40, 34, 48, 1)
            return sky + (1,)
        depth = (y - horizon) / (height - horizon)
        water = mix((200, 110, 70), (20, 40, 80), depth ** 0.7)
        ripple = 0.5 + 0.5 * math.sin(y * 1.7 + math.sin(x * 0.15) * 2)
        if abs(x - width * 0.68) < height * 0.11 * (1 - depth * 0.6) and ripple > 0.55:
            water = mix(water, (255, 220, 150), 0.7)
        return water + (1,)
    return render(width, height, shade, alpha=False)


def genmoji_wave(size):
    """A round face waving a hand: stands in for a genmoji glyph image."""
    def shade(x, y):
        u, v = x / size, y / size
        if (u - 0.78) ** 2 + (v - 0.30) ** 2 <= 0.13 ** 2:
            return (255, 196, 120, 1)
        if (u - 0.44) ** 2 + (v - 0.56) ** 2 > 0.38 ** 2:
            return (0, 0, 0, 0)
        if (u - 0.32) ** 2 + (v - 0.48) ** 2 <= 0.05 ** 2 or (u - 0.56) ** 2 + (v - 0.48) ** 2 <= 0.05 ** 2:
            return (60, 40, 30, 1)
        smile = math.hypot(u - 0.44, v - 0.52)
        if v > 0.60 and abs(smile - 0.18) < 0.035:
            return (60, 40, 30, 1)
        return (255, 205, 60, 1)
    return render(size, size, shade)


IMAGE_MAKERS = {
    "messages-icon.png": lambda: app_icon(40, (110, 230, 120), (40, 190, 70), speech_bubble),
    "mail-icon.png": lambda: app_icon(40, (90, 180, 255), (20, 110, 235), envelope),
    "avatar-anna.png": lambda: avatar(40, (230, 120, 150)),
    "avatar-mum.png": lambda: avatar(40, (120, 150, 230)),
    "genmoji-wave.png": lambda: genmoji_wave(32),
    "photo-harbour.png": lambda: harbour_photo(160, 120),
}

FIXTURE_REFERENCE = re.compile(r'("fixture":\s*"([^"]+)",\s*"base64":\s*")([^"]*)(")')


def main():
    check = "--check" in sys.argv[1:]
    images = {name: make() for name, make in IMAGE_MAKERS.items()}
    stale = []
    for name, data in images.items():
        path = IMAGES / name
        if not path.exists() or path.read_bytes() != data:
            stale.append(str(path.relative_to(ROOT)))
            if not check:
                path.write_bytes(data)
    for path in sorted(CORPUS.glob("*.json")):
        text = path.read_text(encoding="utf-8")

        def embed(match):
            name = match.group(2)
            if name not in images:
                sys.exit(f"{path.relative_to(ROOT)}: no image named {name} (known: {', '.join(images)})")
            return match.group(1) + base64.b64encode(images[name]).decode("ascii") + match.group(4)

        updated = FIXTURE_REFERENCE.sub(embed, text)
        if updated != text:
            stale.append(str(path.relative_to(ROOT)))
            if not check:
                path.write_text(updated, encoding="utf-8")
    for name, data in images.items():
        print(f"{name}: {len(data)} bytes")
    if stale:
        print(("out of date: " if check else "updated: ") + ", ".join(stale))
        if check:
            sys.exit(1)


if __name__ == "__main__":
    main()
