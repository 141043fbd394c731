"""Runtime support for the generated codecs: decode errors and warnings, the values
generated types use besides `msgspec.Struct`, and the canonical encoder.

* `DecodeError` (`path`, `kind`, `expected`, `found`; `message` rendered from them),
  `DecodeErrorKind`, `DecodeWarning` (with the `error` behind it), `WarningKind`, `Decoded`;
* `UNSET` / `UnsetType` (re-exported from msgspec): an optional member that was absent.
  A nullable optional member has three states: `UNSET` (absent), `None` (`null`), a value;
* `Raw` (re-exported from msgspec): free-form JSON kept as its received bytes (`_meta`,
  `rawInput`, extension payloads);
* `Unknown`: an unknown union variant kept as raw JSON; `Float64`; `Flattened`;
* `encode`: the canonical encoding (vectors/README.md, "Canonical encoding").
"""

from __future__ import annotations

from msgspec import UNSET, Raw, UnsetType

from agentproto.codec.errors import Decoded, DecodeError, DecodeWarning, WarningKind
from agentproto.codec.kind import DecodeErrorKind
from agentproto.codec.values import Flattened, Float64, Unknown, encode, encode_float, encode_into

__all__ = [
    "UNSET",
    "DecodeError",
    "DecodeErrorKind",
    "DecodeWarning",
    "Decoded",
    "Flattened",
    "Float64",
    "Raw",
    "Unknown",
    "UnsetType",
    "WarningKind",
    "encode",
    "encode_float",
    "encode_into",
]
