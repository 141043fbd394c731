"""The bounded output buffer of one terminal (the twin of `crates/acp/src/terminal/output.rs`)."""

from __future__ import annotations

import codecs

__all__ = ["OutputBuffer"]

_MAX_CONTINUATION_BYTES = 3
"""A UTF-8 character is one leading byte and at most three continuation bytes."""


def _is_continuation(byte: int) -> bool:
    return byte & 0xC0 == 0x80


class OutputBuffer:
    """The last `limit` bytes of a command's output, or a few fewer after a cut moved to
    a character boundary.

    The kept bytes are `_data[_start:]`: dropping the oldest bytes only moves `_start`,
    and the dead prefix is deleted once it is as long as the live part, so each byte is
    copied a bounded number of times however the output arrives.
    """

    __slots__ = ("_data", "_start", "limit", "truncated")

    def __init__(self, limit: int) -> None:
        self._data = bytearray()
        self._start = 0
        self.limit = limit
        """How many bytes are kept at most."""
        self.truncated = False
        """Whether any byte was ever dropped (once set, it stays set)."""

    def __len__(self) -> int:
        return len(self._data) - self._start

    def push(self, chunk: bytes) -> None:
        """Appends `chunk`, dropping the oldest bytes beyond the limit."""
        cut = False
        if len(chunk) > self.limit:
            # Only the chunk's tail can survive; everything kept before it goes.
            cut = True
            self._data.clear()
            self._start = 0
            chunk = chunk[len(chunk) - self.limit :]
        self._data += chunk
        excess = len(self) - self.limit
        if excess > 0:
            self._start += excess
            cut = True
        if cut:
            self.truncated = True
            # Start on a character: the rest of a character cut in two goes too.
            for _ in range(_MAX_CONTINUATION_BYTES):
                if self._start >= len(self._data) or not _is_continuation(self._data[self._start]):
                    break
                self._start += 1
        if self._start and self._start >= len(self):
            del self._data[: self._start]
            self._start = 0

    def snapshot(self, finished: bool) -> tuple[str, bool]:
        """The text kept and whether anything was dropped.

        Invalid bytes read as U+FFFD. While the command runs (`finished` false), an
        incomplete character at the very end is left out, since its remaining bytes may
        still come; once it has finished, that character is replaced too.
        """
        data = bytes(memoryview(self._data)[self._start :])
        # The incremental decoder holds back exactly a valid but incomplete last character
        # when it is not told the input is final.
        text = codecs.getincrementaldecoder("utf-8")("replace").decode(data, final=finished)
        truncated = self.truncated
        # A replacement character (3 bytes) may stand for a single byte: the text can
        # then be longer than the limit, and its start is dropped to fit.
        if "\ufffd" in text:
            encoded = text.encode("utf-8")
            if len(encoded) > self.limit:
                start = len(encoded) - self.limit
                while start < len(encoded) and _is_continuation(encoded[start]):
                    start += 1
                text = encoded[start:].decode("utf-8")
                truncated = True
        return text, truncated
