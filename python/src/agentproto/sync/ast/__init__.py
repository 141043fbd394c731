"""A reader of the binary source-file format `tsc --api` returns from `getSourceFile`
(protocol version 5 from TypeScript 7.0.2, version 9 from 7.1.0-beta, told apart by the
header; `SourceFile.format`), the same checks and traversal as the Rust reader
(`crates/sync/src/ast/`).

The reader never copies or materialises nodes: a `SourceFile` is a set of section offsets
over the caller's bytes (a `memoryview`; on a little-endian machine the node records are
read through a view cast to u32 words), and a `Node` is an index into it whose fields are
read when asked for. `SourceFile(data)` checks the header and every link once, up front;
`Node.children()` follows `forEachChild` (NodeLists flattened, direct JSDoc children
skipped) and `Node.descendants()` is the preorder walk. The file keeps `data` alive; if
`data` is the client's reused buffer, the file is valid until the next request.
"""

from __future__ import annotations

from agentproto.sync.ast import kind
from agentproto.sync.ast.kind import Kinds
from agentproto.sync.ast.node import Node, NodeList
from agentproto.sync.ast.source_file import (
    FORMAT_V5,
    FORMAT_V9,
    FORMATS,
    KIND_NODE_LIST,
    MIN_HEADER_SIZE,
    NODE_SIZE,
    AstError,
    Format,
    SourceFile,
)

__all__ = [
    "FORMATS",
    "FORMAT_V5",
    "FORMAT_V9",
    "KIND_NODE_LIST",
    "MIN_HEADER_SIZE",
    "NODE_SIZE",
    "AstError",
    "Format",
    "Kinds",
    "Node",
    "NodeList",
    "SourceFile",
    "kind",
]
