"""Image headers read without decoding, so a decompression bomb is refused before any pixel is.

A PNG of a few hundred kilobytes can declare 100,000 x 100,000 pixels; whoever decodes it
(OSRA, a vision model's client, Pillow drawing a report) asks for gigabytes. Every image a
data set hands chemgauge goes through :func:`read_image_header` first: the file size and the
dimensions the header declares are checked against :class:`ImageLimits`, and only then may
the file be decoded, embedded or passed on. Nothing here decodes pixel data.

PNG and JPEG headers are read with Pillow's format plugins directly, which parse the header
without consulting Pillow's process-wide ``Image.MAX_IMAGE_PIXELS``; any other format goes
through ``Image.open``, which is lazy too, and whose ``DecompressionBombError`` (or warning,
under ``-W error``) becomes a refusal like ours. Neither ``MAX_IMAGE_PIXELS`` nor the warning
filters are changed: other users of Pillow in the process keep their settings.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from PIL import Image, ImageFile, JpegImagePlugin, PngImagePlugin, UnidentifiedImageError

from chemgauge.errors import ConfigError, ImageRefusedError

__all__ = [
    "DEFAULT_MAX_IMAGE_BYTES",
    "DEFAULT_MAX_IMAGE_PIXELS",
    "ImageHeader",
    "ImageLimits",
    "ImageRefusedError",
    "read_image_header",
]

#: 50 megapixels: a 300 dpi A4 page is 8.7 MP; recognizer inputs are far smaller.
DEFAULT_MAX_IMAGE_PIXELS = 50_000_000
#: 64 MiB on disk.
DEFAULT_MAX_IMAGE_BYTES = 64 * 1024 * 1024

_DIRECT: tuple[tuple[bytes, type[ImageFile.ImageFile]], ...] = (
    (b"\x89PNG\r\n\x1a\n", PngImagePlugin.PngImageFile),
    (b"\xff\xd8\xff", JpegImagePlugin.JpegImageFile),
)


@dataclass(frozen=True, slots=True)
class ImageLimits:
    """The largest image accepted: pixels declared by the header, and bytes on disk."""

    max_pixels: int = DEFAULT_MAX_IMAGE_PIXELS
    max_bytes: int = DEFAULT_MAX_IMAGE_BYTES

    def __post_init__(self) -> None:
        if self.max_pixels < 1 or self.max_bytes < 1:
            raise ConfigError(
                f"image limits must be positive, got {self.max_pixels} pixels and "
                f"{self.max_bytes} bytes"
            )


@dataclass(frozen=True, slots=True)
class ImageHeader:
    """What an image's header declares (nothing was decoded to learn it)."""

    format: str
    width: int
    height: int
    size_bytes: int

    @property
    def pixels(self) -> int:
        """Width times height."""
        return self.width * self.height


def _identify(handle: IO[bytes]) -> tuple[str, int, int]:
    """(format, width, height) from the header; raises whatever the parser raises."""
    prefix = handle.read(16)
    handle.seek(0)
    for magic, factory in _DIRECT:
        if prefix.startswith(magic):
            with factory(handle) as image:  # header only: the constructor reads no pixels
                return str(image.format), image.width, image.height
    with Image.open(handle) as image:  # lazy: identifies the format and reads the header
        return str(image.format), image.width, image.height


def read_image_header(path: str | Path, limits: ImageLimits | None = None) -> ImageHeader:
    """Read an image's declared size and refuse it if it is over ``limits`` (default limits).

    Raises:
        ImageRefusedError: the file cannot be read, is not a regular file, is not an image
            Pillow can identify, or its size on disk or declared pixel count is over the limit.
    """
    limits = limits or ImageLimits()
    try:
        with open(path, "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise ImageRefusedError("not a regular file", path=path)
            if info.st_size > limits.max_bytes:
                raise ImageRefusedError(
                    f"image file has {info.st_size:,} bytes, more than the limit of "
                    f"{limits.max_bytes:,}",
                    path=path,
                )
            try:
                fmt, width, height = _identify(handle)
            except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
                raise ImageRefusedError(
                    f"refused before decoding, a possible decompression bomb ({exc})", path=path
                ) from None
            except UnidentifiedImageError:
                raise ImageRefusedError(
                    "not an image format Pillow can identify (PNG, JPEG, GIF, TIFF, ...)",
                    path=path,
                ) from None
            except Exception as exc:  # a header parser meeting hostile bytes may raise anything
                raise ImageRefusedError(
                    f"not a readable image ({type(exc).__name__}: {exc})"[:300], path=path
                ) from None
    except IsADirectoryError:
        raise ImageRefusedError("expected an image file, found a directory", path=path) from None
    except FileNotFoundError:
        raise ImageRefusedError("image file not found", path=path) from None
    except OSError as exc:  # opening failed (permissions, a dangling link, ...)
        reason = exc.strerror or type(exc).__name__
        raise ImageRefusedError(f"cannot open image ({reason})", path=path) from None
    if width * height > limits.max_pixels:
        raise ImageRefusedError(
            f"image declares {width} x {height} pixels ({width * height:,}), more than the "
            f"limit of {limits.max_pixels:,}; refused before decoding",
            path=path,
        )
    return ImageHeader(fmt, width, height, info.st_size)
