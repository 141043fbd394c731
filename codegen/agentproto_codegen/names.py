"""Identifier spelling shared by the schema readers and every emitter."""

from __future__ import annotations

import re


def camel(s: str) -> str:
    """``user_message_chunk`` / ``date-time`` / ``$/cancel_request`` -> ``UserMessageChunk`` ...

    A result that would start with a digit (or be empty) gets a ``V`` prefix.
    """
    parts = re.split(r"[^A-Za-z0-9]+", s)
    out = "".join(p[:1].upper() + p[1:] for p in parts if p)
    return out if out and not out[0].isdigit() else "V" + out
