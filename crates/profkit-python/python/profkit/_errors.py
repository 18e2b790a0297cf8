"""The exceptions profkit raises, each carrying where the problem is.

Every failure is a :class:`ProfkitError`. Its ``file`` names the input; ``offset`` is the byte
offset (protobuf and XDL inputs, and JSON inputs where the reader knows it), ``field_path`` the
protobuf message and field path (``XSpace.planes[0].lines[2].events[5]``), ``json_path`` the
JSON path (``traceEvents[1].ts``), ``line`` and ``column`` the JSON text position. Each is
``None`` when the failure has no such place.
"""

from __future__ import annotations

import re
from typing import Optional

__all__ = [
    "ProfkitError",
    "ProfkitIOError",
    "UnknownFormatError",
    "DecodeError",
    "TruncatedError",
    "LimitError",
    "UsageError",
    "ConversionError",
    "from_failure",
    "from_message",
    "from_cli",
]


class ProfkitError(Exception):
    """A file profkit could not read, check or convert.

    Attributes:
        file: the input (or output) the failure is about, or ``None``.
        message: what went wrong, with its place, as the ``profkit`` command prints it.
        offset: the byte offset of the problem, or ``None``.
        field_path: the protobuf message and field path, or ``None``.
        json_path: the JSON path (``"$"`` for the top level), or ``None``.
        line: the JSON line (1-based), or ``None``.
        column: the JSON column (1-based), or ``None``.
    """

    def __init__(self, message: str, file: Optional[str] = None) -> None:
        super().__init__(f"{file}: {message}" if file else message)
        self.file = file
        self.message = message
        self.offset: Optional[int] = None
        self.field_path: Optional[str] = None
        self.json_path: Optional[str] = None
        self.line: Optional[int] = None
        self.column: Optional[int] = None
        _locate(self)


class ProfkitIOError(ProfkitError, OSError):
    """A file could not be opened, read or written."""


class UnknownFormatError(ProfkitError, ValueError):
    """The content is of no format profkit reads (name it with ``format=``)."""


class DecodeError(ProfkitError, ValueError):
    """The input is malformed: bad bytes, bad JSON, a field of the wrong type."""


class TruncatedError(DecodeError):
    """The input ends inside a message or value (everything before ``offset`` was read)."""


class LimitError(DecodeError):
    """The input is over one of the readers' limits (size, nesting depth)."""


class UsageError(ProfkitError, ValueError):
    """The call asks for something that cannot be done (a format that is written only, an
    output that exists, arguments that do not fit)."""


class ConversionError(ProfkitError):
    """A conversion or its output failed after the inputs were read."""


# Protobuf paths: a message name, then fields with indices ("XSpace.planes[0].name",
# "XSpace.<unknown field 9>", "Profile.events[1].start_ns").
_FIELD_PATH = re.compile(
    r"(?:malformed|inside|in)\s+([A-Z][A-Za-z0-9_]*(?:\.(?:<[^>]*>|[A-Za-z0-9_]+)(?:\[\d+\])*)*)"
)
_BYTE = re.compile(r"\bbyte (\d+)")
_JSON_AT = re.compile(r"\bat (.+?) \(line (\d+), column (\d+)(?:, byte (\d+))?\)")


def _locate(error: ProfkitError) -> None:
    text = error.message
    at = _JSON_AT.search(text)
    if at:
        path = at.group(1)
        error.json_path = "$" if path == "the top level" else path
        error.line = int(at.group(2))
        error.column = int(at.group(3))
        if at.group(4) is not None:
            error.offset = int(at.group(4))
    else:
        paths = [m.group(1) for m in _FIELD_PATH.finditer(text)]
        if paths:
            error.field_path = max(paths, key=len)
    if error.offset is None:
        byte = _BYTE.search(text)
        if byte:
            error.offset = int(byte.group(1))


def _class_for(kind: str, message: str) -> type:
    lower = message.lower()
    if kind == "usage":
        return UsageError
    if kind == "io" or lower.startswith("cannot open") or lower.startswith("cannot read"):
        return ProfkitIOError
    if kind == "format" or "unrecognised format" in lower:
        return UnknownFormatError
    if kind == "convert":
        return ConversionError
    if "truncated" in lower or "input ends" in lower:
        return TruncatedError
    if (
        "over the limit" in lower
        or "nested deeper" in lower
        or "limit of" in lower
        or "the limit for gzip input" in lower
        or "more than the budget of" in lower
    ):
        return LimitError
    return DecodeError


def from_failure(kind: str, file: Optional[str], message: str) -> ProfkitError:
    """The exception for a failure reported by the native module."""
    return _class_for(kind, message)(message, file)


def _split_file(text: str, files: list) -> tuple:
    """The file of ``files`` that ``text`` starts with (``FILE: ...``), and the rest."""
    for candidate in sorted((str(f) for f in files), key=len, reverse=True):
        if text.startswith(candidate + ": "):
            return candidate, text[len(candidate) + 2:]
    return None, text


def from_message(kind: str, message: str, files: list) -> ProfkitError:
    """The exception for a failed in-process call of a command (the native module's): its message,
    split into the file it names (one of ``files``) and what it says."""
    file, text = _split_file(message, files)
    if kind == "decode" and file is None and text.startswith("cannot write output"):
        kind = "convert"
    return from_failure(kind, file, text)


def from_cli(stderr: str, exit_code: int, files: list) -> ProfkitError:
    """The exception for a ``profkit`` command that failed: its last message, split into the file
    it names (one of ``files``) and what it says."""
    lines = [
        line[len("profkit: "):] if line.startswith("profkit: ") else line
        for line in stderr.strip().splitlines()
        if line.strip() and ": warning: " not in line
    ]
    text = lines[-1] if lines else f"the profkit command exited with {exit_code}"
    if exit_code == 2 and text.startswith("error: "):
        text = text[len("error: "):]
    file = None
    for candidate in sorted((str(f) for f in files), key=len, reverse=True):
        if text.startswith(candidate + ": "):
            file = candidate
            text = text[len(candidate) + 2:]
            break
    kind = "usage" if exit_code == 2 else "decode"
    if kind == "decode" and file is None and text.startswith("cannot write output"):
        kind = "convert"
    return from_failure(kind, file, text)
