"""Reading the JSONL files commands are given (corpora, feedback events).

Every problem with the file itself, rather than with one record, becomes an
:class:`~nuggetflow.errors.InputError` naming the path (and the line where there is one):
a missing file, a directory, a file that cannot be read, binary data (a NUL byte), text
that is not UTF-8 (a Latin-1 export, say), a line beyond a size limit. The CLI prints it
as one line and exits with status 2.
"""

from __future__ import annotations

import errno
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from nuggetflow.errors import InputError

_REASONS = {errno.ENOENT: "no such file", errno.EISDIR: "is a directory, not a file",
            errno.EACCES: "permission denied", errno.ENOTDIR: "no such file"}


def open_input(path: str | Path) -> BinaryIO:
    """Open a file for reading bytes; InputError when it is missing, a directory or
    unreadable."""
    name = str(path)
    if Path(path).is_dir():
        raise InputError(name, _REASONS[errno.EISDIR])
    try:
        return Path(path).open("rb")
    except OSError as exc:
        reason = _REASONS.get(exc.errno or 0) or exc.strerror or type(exc).__name__
        raise InputError(name, reason) from None


def check_line(name: str, number: int, line: bytes) -> None:
    """InputError unless the line is UTF-8 text without NUL bytes."""
    nul = line.find(b"\0")
    if nul >= 0:
        raise InputError(name, f"binary data (a NUL byte at byte {nul + 1}), "
                         "expected UTF-8 JSON lines", line=number)
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(name, f"not UTF-8 text (byte 0x{line[exc.start]:02x} at byte "
                         f"{exc.start + 1}); convert the file to UTF-8", line=number) from None


def read_lines(path: str | Path, *, max_line_bytes: int | None = None,
               too_long: str = "") -> Iterator[tuple[int, bytes]]:
    """(line number, line without its end) of a UTF-8 text file, blank lines included.

    InputError for the file (see :func:`open_input`) and for the first line that is not
    UTF-8 text, holds a NUL byte, or is longer than ``max_line_bytes`` (only that much of
    it is read; ``too_long`` is added to the message).
    """
    name = str(path)
    limit = -1 if max_line_bytes is None else max_line_bytes + 2  # room for "\r\n"
    with open_input(path) as fh:
        number = 0
        while True:
            try:
                raw = fh.readline(limit)
            except OSError as exc:
                raise InputError(name, exc.strerror or str(exc), line=number + 1) from None
            if not raw:
                return
            number += 1
            line = raw.rstrip(b"\r\n")
            if max_line_bytes is not None and len(line) > max_line_bytes:
                raise InputError(name, f"line longer than {max_line_bytes} bytes"
                                 + (f" ({too_long})" if too_long else ""), line=number)
            check_line(name, number, line)
            yield number, line
