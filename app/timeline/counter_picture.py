"""A counter track's drawing at one zoom, kept between frames: pixels on a grid anchored to the trace start,
extended strip by strip as the view pans.

Pixel ``k`` of a zoom of ``b`` ns a pixel is the time [start + k * b, start + (k + 1) * b), whatever the view:
a picture built for one view and the strips added to it as the view pans cut the samples into the same
pixels a cold frame would (:meth:`CounterSet.lod` with an ``anchor``), so a pan only draws the picture
moved and summarises the pixels it brings into view. A zoom makes a new picture of the view alone (no
margin: a zoom frame costs what it did before pictures were kept)."""

from __future__ import annotations

import numpy as np
from PySide6.QtGui import QImage

from fxscope.app.timeline.lane_item import rect_buffer
from fxscope.core.trace import compiled

#: entries up to which a picture is two rectangle buffers (two rectangles per entry); more make one image
RECTS_UP_TO = 256


def round_up4(n: int) -> int:
    """``n`` rounded up to a multiple of 4 (image rows 32-bit aligned, as QImage wants them)."""
    return n + (-n % 4)


class CounterPicture:
    """Grid pixels [k0, k1) of one counter at zoom (``sx`` pixels a second, ``sy`` per row unit): its lod
    entries in pixels from pixel ``k0`` (x) and the track's top (y), drawn as two rectangle buffers (few
    entries) or as one image of one byte a pixel (:func:`area_pixels`)."""

    def __init__(self, k0: int, sx: float, sy: float, full: float, fill: int, band: int,
                 spare: CounterPicture | None = None) -> None:  # fmt: skip
        """``spare``: the picture this one replaces (a zoom's), whose pixel buffers it may take: fresh
        memory is faulted in page by page, ~1 ms for a counter's buffers on this machine."""
        self.k0 = self.k1 = k0
        self.sx, self.sy, self.full = sx, sy, full
        self._colours = [0, fill, band, band]
        z = np.zeros(0)
        self.left, self.width, self.y_max, self.y_min = z, z, z, z
        self.zero = 0.0
        self.rects: tuple[np.ndarray, np.ndarray] | None = None  # (area, band) rectangles, or
        self.y_top = 0  # the image's first row (pixels from the track's top)
        # the image's pixels in buffers wider than the picture, with room to add strips on either side
        # without copying what it has: one byte a pixel (1 area, 2 band), and the same in colour, which
        # ``image`` (a QImage over the whole buffer) shows from column ``c0``
        self._codes: np.ndarray | None = None
        self._argb: np.ndarray | None = None
        self.image: QImage | None = None
        self.c0 = 0
        self._lut = np.array(self._colours, np.uint32)
        self._spare = (spare._codes, spare._argb, spare.image) if spare is not None and spare._codes is not None else None

    def same_zoom(self, sx: float, sy: float) -> bool:
        return abs(sx - self.sx) <= 1e-9 * sx and sy == self.sy

    def covers(self, ka: int, kb: int, sx: float, sy: float) -> bool:
        """Whether the picture holds grid pixels [ka, kb) at zoom (sx, sy)."""
        return self.k0 <= ka and kb <= self.k1 and self.same_zoom(sx, sy)

    def add(self, ka: int, kb: int, strip: tuple) -> None:
        """Add grid pixels [ka, kb) (next to the picture: ``kb == k0`` or ``ka == k1``, any range when the
        picture is empty; ``kb - ka`` a multiple of 4) from ``strip`` = (left, width, y max, y min, y zero)
        in pixels from ``ka`` (:meth:`CounterTrackItem.bands`)."""
        left, width, y_max, y_min, zero = strip
        if self.k0 == self.k1:
            self.k0 = self.k1 = ka
        before = kb == self.k0 and ka < self.k0
        shift = float(ka - self.k0)
        parts = [(left + shift, width, y_max, y_min), (self.left, self.width, self.y_max, self.y_min)]
        if not before:
            parts.reverse()
        self.left, self.width, self.y_max, self.y_min = (np.concatenate(c) for c in zip(*parts, strict=True))
        if before:
            self.left = self.left - shift  # (the picture's pixel 0 moves to ka)
            self.k0 = ka
        else:
            self.k1 = kb
        self.zero = zero
        if len(self.left) <= RECTS_UP_TO:
            # the area between zero and the band (light), then the band itself: min..max of the pixel (dark,
            # at least a pixel high so that a flat stretch shows its value as a line)
            near = np.where(self.y_min > zero, self.y_max, self.y_min)  # the band's edge nearest zero
            w = np.maximum(self.width, 1.0)
            self.rects = (rect_buffer(self.left, np.minimum(near, zero), w, np.abs(near - zero)),
                          rect_buffer(self.left, self.y_max, w, np.maximum(self.y_min - self.y_max, 1.0)))  # fmt: skip
            return
        self.rects = None
        if self._codes is None:  # (the first image of this picture: all of it)
            self.y_top, codes = area_pixels(self.left, self.width, self.y_max, self.y_min, zero, self.full,
                                            self.k1 - self.k0)  # fmt: skip
            self._place(codes, 0, before=False)
        else:  # the strip alone, beside the pixels the picture has
            _, codes = area_pixels(left, width, y_max, y_min, zero, self.full, kb - ka)
            self._place(codes, ka - self.k0 if not before else 0, before)

    def _place(self, codes: np.ndarray, at: int, before: bool) -> None:
        """Write a strip's pixel codes (rows x columns) at picture column ``at`` (``before``: left of the
        picture, whose column 0 has already moved to the strip's first), and in colour beside them; the
        buffers grow (by copying what they hold once) when the strip does not fit."""
        rows, width = codes.shape
        have = 0 if self._codes is None else self._codes.shape[1]
        used = self.k1 - self.k0  # the picture's columns, the strip's included
        old = used - width
        start = self.c0 - width if before else self.c0 + at
        if self._codes is None or start < 0 or start + width > have:
            # room for the strip and as much again on either side as the picture is wide (pans add strips
            # either way; a picture grows to CounterTrackItem.KEEP view widths at most)
            cap = 3 * used + 64
            new_codes, new_argb, image = self._buffers(rows, cap)
            cap = new_codes.shape[1]
            c0 = (cap - used) // 2
            if self._codes is not None and old:
                keep = slice(c0 + width, c0 + used) if before else slice(c0, c0 + old)
                new_codes[:, keep] = self._codes[:, self.c0 : self.c0 + old]
                new_argb[:, keep] = self._argb[:, self.c0 : self.c0 + old]
            self._codes, self._argb, self.c0, self.image = new_codes, new_argb, c0, image
            start = c0 if before else c0 + at
        elif before:
            self.c0 = start
        self._codes[:, start : start + width] = codes
        # (in colour once here: Qt converts an indexed image at every draw, 0.1 ms a counter a frame)
        kernels = compiled.slice_kernels
        if kernels is not None:
            kernels.colour_codes(np.ascontiguousarray(codes), rows, width, self._lut, self._argb, self._argb.shape[1],
                                 start)  # fmt: skip
        else:
            self._argb[:, start : start + width] = self._lut[codes & 3]

    def _buffers(self, rows: int, cap: int) -> tuple[np.ndarray, np.ndarray, QImage]:
        """Pixel buffers of ``rows`` x at least ``cap`` columns and the image over the colours: the spare
        picture's when they are that large (only the columns a picture writes are shown: no need to clear
        them), else new ones."""
        spare, self._spare = self._spare, None
        if spare is not None and spare[0].shape[0] == rows and spare[0].shape[1] >= cap:
            return spare
        codes, argb = np.empty((rows, cap), np.uint8), np.empty((rows, cap), np.uint32)
        return codes, argb, QImage(argb.data, cap, rows, 4 * cap, QImage.Format.Format_ARGB32_Premultiplied)

    @property
    def pixels(self) -> np.ndarray | None:
        """The picture's pixel codes (rows from ``y_top`` x its columns: 1 area, 2 band), None when it is
        drawn as rectangles."""
        if self._codes is None or self.rects is not None:
            return None
        return self._codes[:, self.c0 : self.c0 + self.k1 - self.k0]

    @property
    def colours(self) -> np.ndarray | None:
        """The pixels as ``image`` shows them (premultiplied ARGB), the same columns as :attr:`pixels`."""
        if self._argb is None or self.rects is not None:
            return None
        return self._argb[:, self.c0 : self.c0 + self.k1 - self.k0]

    def entries_in(self, ka: int, kb: int) -> int:
        """How many entries grid pixels [ka, kb) show (what a frame drew)."""
        a, b = ka - self.k0, kb - self.k0
        first = max(int(np.searchsorted(self.left, a, "right")) - 1, 0)
        return max(int(np.searchsorted(self.left, b, "left")) - first, 0)


def area_pixels(left, width, y_max, y_min, zero: float, full: float, columns: int) -> tuple[int, np.ndarray]:
    """:func:`area_pixels_numpy` by the compiled loop when it is built (slice_kernels.area_pixels: one pass
    over the columns; the numpy path was ~0.35 ms a counter at every zoom, a dozen counters a frame)."""
    kernels = compiled.slice_kernels
    if kernels is None:
        return area_pixels_numpy(left, width, y_max, y_min, zero, full, columns)
    y0, y1 = -1, int(np.ceil(full)) + 2
    pixels = np.zeros((y1 - y0, max(columns, 0)), np.uint8)
    if len(left) and columns > 0:
        kernels.area_pixels(*(np.ascontiguousarray(c, np.float64) for c in (left, width, y_max, y_min)), float(zero),
                            y0, y1 - y0, columns, pixels)  # fmt: skip
    return y0, pixels


def area_pixels_numpy(left, width, y_max, y_min, zero: float, full: float, columns: int) -> tuple[int, np.ndarray]:
    """A counter's drawing over pixel columns [0, ``columns``) of a lane ``full`` pixels high as one byte a
    pixel: (the first row's y, a (rows, columns) uint8 array), 1 for the area, 2 for the band.

    Per pixel column (the entry over its centre), the band from the max to the min (at least a pixel high)
    and the area between the band and the zero line, pixels taken by their centres as Qt fills
    rectangles. Built with numpy over ~2000 x 35 pixels: a thousand times fewer calls than two rectangles
    per entry, which cost ~1 ms a track a frame; shown through a colour table (a uint32 image filled
    through masks cost twice as much).
    """
    y0, y1 = -1, int(np.ceil(full)) + 2
    rows = np.arange(y1 - y0, dtype=np.int16)[:, None]
    if not len(left) or columns <= 0:
        return y0, np.zeros((y1 - y0, max(columns, 0)), np.uint8)
    right = left + np.maximum(width, 1.0)
    centre = np.arange(columns) + 0.5
    entry = np.searchsorted(left, centre, "right") - 1
    has = entry >= 0
    entry = np.maximum(entry, 0)
    has &= centre < right[entry]
    y_max, y_min = y_max[entry], y_min[entry]
    near = np.where(y_min > zero, y_max, y_min)  # the band's edge nearest the zero line
    band_bottom = y_max + np.maximum(y_min - y_max, 1.0)

    def first_row(y: np.ndarray) -> np.ndarray:  # the first row whose centre is at or below y
        return np.clip(np.ceil(y - 0.5) - y0, 0, y1 - y0).astype(np.int16)

    area_top, area_bottom = first_row(np.minimum(near, zero)), first_row(np.maximum(near, zero))
    band_top, band_end = first_row(y_max), first_row(band_bottom)
    area_bottom[~has] = area_top[~has]  # (columns with no entry: empty ranges)
    band_end[~has] = band_top[~has]
    pixels = ((rows >= area_top) & (rows < area_bottom)).view(np.uint8)
    pixels |= ((rows >= band_top) & (rows < band_end)).view(np.uint8) << 1
    return y0, pixels
