"""The header of the binary source-file format and the checks made once per buffer.

Two protocol versions are read, told apart by the first word: 5 (npm `typescript@7.0.2`)
and 9 (`typescript@7.1.0-beta`). Layout (facts from the official clients'
`dist/api/node/protocol.js` and `node.js` in both packages; integers little-endian):

======  =====================================================================
offset  header field
======  =====================================================================
0       metadata: protocol version in the top byte (``5 << 24`` or ``9 << 24``)
4..20   content hash, four words (lo0, lo1, hi0, hi1)
20      parse options key
24      offset of the string offsets table (pairs of start/end words)
28      offset of the string data (WTF-8)
32      offset of the extended data (words)
36      offset of the structured data (MessagePack)
40      offset of the nodes, which run to the end of the buffer
44      version 9 only: the source file's node id (u64)
52      version 9 only: the lease of a retained file (u64, 0 when not retained)
60      version 9 only: offset of binder data (0 when absent; not read)
======  =====================================================================

The header is 44 bytes in version 5 and 64 in version 9; the rest has the same layout.
The other difference is the `SyntaxKind` numbering (`Format.kinds`).

Each node is 28 bytes: kind, pos, end, next sibling, parent, data, flags. Node 0 is nil and
node 1 the root. Nodes are in preorder: a node's first child, if any, is the record right
after it (its parent field names it); the other children follow through `next` (0 ends the
chain). A NodeList has kind ``0xFFFFFFFF`` and its element count in `data`; its elements
take its parent as their logical parent. `data`'s top two bits say what the rest holds:
``00`` a child-presence mask in the low byte, ``01`` a string index in the low 24 bits,
``10`` an offset into the extended data in the low 24 bits.
"""

from __future__ import annotations

import array
import struct
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agentproto.errors import AgentprotoError
from agentproto.sync.ast.kind import Kinds

if TYPE_CHECKING:
    from agentproto.sync.ast.node import Node
    from agentproto.sync.frame import BytesLike

__all__ = [
    "FORMATS",
    "FORMAT_V5",
    "FORMAT_V9",
    "KIND_NODE_LIST",
    "MIN_HEADER_SIZE",
    "NODE_SIZE",
    "AstError",
    "Format",
    "SourceFile",
]


@dataclass(frozen=True, slots=True)
class Format:
    """What one protocol version of the binary format looks like to this reader."""

    version: int
    """The protocol version (the metadata word's top byte)."""
    typescript: str
    """The TypeScript release whose server writes it."""
    header_size: int
    """Bytes in the header."""
    kinds: Kinds
    """The kinds whose number depends on the version."""


FORMAT_V5 = Format(5, "7.0.2", 44, Kinds(interface_declaration=265, source_file=307, jsdoc=315))
"""Protocol version 5, written by TypeScript 7.0.2."""
FORMAT_V9 = Format(9, "7.1.0-beta", 64, Kinds(interface_declaration=266, source_file=308, jsdoc=316))
"""Protocol version 9, written by TypeScript 7.1.0-beta."""
FORMATS = {entry.version: entry for entry in (FORMAT_V5, FORMAT_V9)}
"""The formats this reader understands, by protocol version."""
MIN_HEADER_SIZE = 44
"""Bytes in the smallest header (version 5's)."""
NODE_SIZE = 28
"""Bytes in one node record."""
KIND_NODE_LIST = 0xFFFF_FFFF
"""The kind of a NodeList record."""

# The words of a node record, and `data`'s tag bits.
WORDS = 7
KIND, POS, END, NEXT, PARENT, DATA, FLAGS = range(WORDS)
DATA_TYPE_MASK = 0xC000_0000
DATA_TYPE_STRING = 0x4000_0000
DATA_TYPE_EXTENDED = 0x8000_0000
DATA_INDEX_MASK = 0x00FF_FFFF

_HEADER = struct.Struct("<11I")


class AstError(AgentprotoError):
    """A buffer that is not a source file this reader accepts. `index` is the node a link
    check failed at (`None` for header problems)."""

    def __init__(self, message: str, index: int | None = None) -> None:
        super().__init__(message)
        self.index = index


def _words(data: memoryview) -> Sequence[int]:
    """The little-endian u32 words of `data`: a view where the machine is little-endian
    (no copy), a byte-swapped copy elsewhere."""
    if sys.byteorder == "little":
        return data.cast("I")
    words = array.array("I", data)
    words.byteswap()
    return words


class SourceFile:
    """A source file in the binary format: section offsets over the caller's bytes (kept
    as a `memoryview`, never copied). Construction checks the header and, in one pass over
    the nodes, the links every traversal follows (parents before children, `next` forward
    and among siblings, no list directly in a list), so that no traversal of an accepted
    buffer can loop, fail or leave it."""

    __slots__ = (
        "_bytes",
        "_count",
        "_extended",
        "_string_count",
        "_string_offsets",
        "_strings",
        "format",
        "jsdoc",
        "words",
    )

    def __init__(self, data: BytesLike) -> None:
        view = memoryview(data).cast("B")
        length = view.nbytes
        if length < MIN_HEADER_SIZE:
            raise AstError(f"{length} bytes is shorter than the {MIN_HEADER_SIZE}-byte header")
        header: tuple[int, ...] = _HEADER.unpack_from(view, 0)
        version = header[0] >> 24
        layout = FORMATS.get(version)
        if layout is None:
            raise AstError(f"protocol version {version}, expected one of {sorted(FORMATS)}")
        if length < layout.header_size:
            raise AstError(f"{length} bytes is shorter than the {layout.header_size}-byte header")
        self.format = layout
        """The format the header's version names."""
        self.jsdoc = layout.kinds.jsdoc
        offsets = header[6:11]
        in_order = (
            offsets[0] >= layout.header_size
            and all(offsets[i] <= offsets[i + 1] for i in range(4))
            and offsets[4] <= length
            and (offsets[1] - offsets[0]) % 4 == 0
        )
        if not in_order:
            raise AstError(f"section offsets {list(offsets)} are not in order within {length} bytes")
        string_offsets, strings, extended, structured, nodes = offsets
        node_bytes = length - nodes
        if node_bytes % NODE_SIZE != 0 or node_bytes // NODE_SIZE < 2:
            raise AstError(f"node section of {node_bytes} bytes is not 2 or more whole {NODE_SIZE}-byte nodes")
        self._bytes = view
        self._string_offsets = _words(view[string_offsets:strings])
        self._string_count = (strings - string_offsets) // 4
        self._strings = view[strings:extended]
        self._extended = view[extended:structured]
        self.words = _words(view[nodes:])
        """The node records' words: word ``7 * index + field`` (kind, pos, end, next,
        parent, data, flags)."""
        self._count = node_bytes // NODE_SIZE
        self._check_links()

    def _check_links(self) -> None:
        words = self.words
        count = self._count
        if words[WORDS + KIND] == KIND_NODE_LIST:
            raise AstError("node 1: the root is a NodeList", 1)
        if words[WORDS + PARENT] != 0 or words[WORDS + NEXT] != 0:
            raise AstError("node 1: the root has a parent or a sibling", 1)
        # Column lists: one bulk conversion each instead of an index computation per field.
        kinds = words[KIND::WORDS]
        parents = words[PARENT::WORDS]
        nexts = words[NEXT::WORDS]
        datas = words[DATA::WORDS]
        for index in range(2, count):
            parent = parents[index]
            if parent == 0 or parent >= index:
                raise AstError(f"node {index}: its parent is not an earlier node", index)
            following = nexts[index]
            if following != 0 and (following <= index or following >= count or parents[following] != parent):
                raise AstError(f"node {index}: its next sibling is not a later node with the same parent", index)
            if kinds[index] == KIND_NODE_LIST:
                if kinds[parent] == KIND_NODE_LIST:
                    raise AstError(f"node {index}: a NodeList directly inside a NodeList", index)
                if datas[index] > 0 and (index + 1 >= count or parents[index + 1] != index):
                    raise AstError(f"node {index}: a non-empty NodeList without elements", index)

    @property
    def bytes(self) -> memoryview:
        """The whole buffer."""
        return self._bytes

    @property
    def kinds(self) -> Kinds:
        """The kinds whose number depends on the format."""
        return self.format.kinds

    @property
    def node_id(self) -> int | None:
        """The source file's node id (version 9 headers; `None` in version 5)."""
        return self._header_u64(44)

    @property
    def lease(self) -> int | None:
        """The lease of a retained source file (version 9; `None` in version 5, 0 for a
        file fetched without retaining it)."""
        return self._header_u64(52)

    def _header_u64(self, at: int) -> int | None:
        if self.format.header_size < at + 8:
            return None
        return int.from_bytes(self._bytes[at : at + 8], "little")

    @property
    def content_hash(self) -> int:
        """The 128-bit content hash from the header (hi1, hi0, lo1, lo0 from the top)."""
        return int.from_bytes(self._bytes[4:20], "little")

    @property
    def parse_options(self) -> int:
        """The parse options key from the header."""
        value: int = struct.unpack_from("<I", self._bytes, 20)[0]
        return value

    @property
    def record_count(self) -> int:
        """The number of node records, the nil node and NodeLists included."""
        return self._count

    def root(self) -> Node:
        """The root node (index 1; a `SourceFile` for `getSourceFile` results)."""
        from agentproto.sync.ast.node import Node

        return Node(self, 1)

    def node(self, index: int) -> Node | None:
        """The node at `index`, if there is one there (not nil, not a NodeList)."""
        from agentproto.sync.ast.node import Node

        if 1 <= index < self._count and self.words[index * WORDS + KIND] != KIND_NODE_LIST:
            return Node(self, index)
        return None

    def string(self, index: int) -> memoryview | None:
        """The string at `index` of the string table (WTF-8 bytes, a view), if in range."""
        if index < 0 or index + 1 >= self._string_count:
            return None
        start: int = self._string_offsets[index]
        end: int = self._string_offsets[index + 1]
        if start > end or end > self._strings.nbytes:
            return None
        return self._strings[start:end]

    def extended_word(self, offset: int) -> int | None:
        """The word at `offset` bytes into the extended data, if in range."""
        if offset < 0 or offset + 4 > self._extended.nbytes:
            return None
        return int.from_bytes(self._extended[offset : offset + 4], "little")

    def _root_string(self, slot: int) -> memoryview | None:
        root = self.root()
        if root.kind != self.format.kinds.source_file:
            return None
        offset = root.extended_offset
        if offset is None:
            return None
        index = self.extended_word(offset + slot * 4)
        return None if index is None else self.string(index)

    @property
    def text(self) -> memoryview | None:
        """The file's text (WTF-8), when the root is a `SourceFile`."""
        return self._root_string(0)

    @property
    def file_name(self) -> memoryview | None:
        """The file's name, when the root is a `SourceFile`."""
        return self._root_string(1)

    @property
    def path(self) -> memoryview | None:
        """The file's path (canonical name), when the root is a `SourceFile`."""
        return self._root_string(2)
