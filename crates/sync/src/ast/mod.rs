//! A reader of the binary source-file format `tsc --api` returns from
//! `getSourceFile`: protocol version 5 (TypeScript 7.0.2) and version 9
//! (TypeScript 7.1.0-beta), told apart by the version in the first word.
//!
//! The reader never copies or materialises nodes: a [`SourceFile`] is a set of
//! section offsets over the caller's bytes, and a [`Node`] is an index into it
//! whose fields are read from the bytes when asked for.
//!
//! # Layout (facts from the official clients' `dist/api/node/protocol.js` and
//! `node.js` of both packages; all integers little-endian)
//!
//! | offset | header field |
//! |---|---|
//! | 0 | metadata: protocol version in the top byte (`5 << 24` or `9 << 24`) |
//! | 4..20 | content hash, four words (lo0, lo1, hi0, hi1) |
//! | 20 | parse options key |
//! | 24 | offset of the string offsets table (pairs of start/end words) |
//! | 28 | offset of the string data (WTF-8) |
//! | 32 | offset of the extended data (words) |
//! | 36 | offset of the structured data (MessagePack) |
//! | 40 | offset of the nodes, which run to the end of the buffer |
//! | 44 | version 9 only: the source file's node id (u64) |
//! | 52 | version 9 only: the lease of a retained file (u64, 0 when not retained) |
//! | 60 | version 9 only: offset of binder data (0 when absent; the official client does not read it) |
//!
//! The header is 44 bytes in version 5 and 64 in version 9; everything after
//! it has the same layout in both. What differs besides the header is the
//! `SyntaxKind` numbering: 7.1 inserts `SourceKeyword` at 167, so every kind
//! from 167 up is one higher ([`Format::kinds`]).
//!
//! Each node is 28 bytes: kind, pos, end, next sibling, parent, data, flags.
//! Node 0 is nil and node 1 the root (the source file). Nodes are in preorder:
//! a node's first child, if any, is the node right after it (its parent field
//! names it), and the other children follow through `next` (0 ends the
//! chain). A NodeList is a node of kind `0xFFFFFFFF` whose `data` is its
//! element count; its elements are its children and take its parent as
//! their logical parent. `data`'s top two bits say what the rest holds:
//! `00` a child-presence mask in the low byte, `01` a string index in the low
//! 24 bits, `10` an offset into the extended data in the low 24 bits.
//!
//! [`SourceFile::new`] checks the header and, in one pass over the nodes
//! without allocating, the links every traversal follows (parents before
//! children, `next` forward and among siblings, no list directly in a list),
//! so that no traversal of an accepted buffer can loop, panic or leave it.

mod node;

pub use node::{Child, Children, Descendants, Node, NodeList, RawChildren};

/// The protocol versions this reader understands, oldest first.
pub const PROTOCOL_VERSIONS: [u32; 2] = [FORMAT_V5.version, FORMAT_V9.version];
/// Bytes in the smallest header (version 5's).
pub const MIN_HEADER_SIZE: usize = 44;
/// Bytes in one node record.
pub const NODE_SIZE: usize = 28;
/// The kind of a NodeList record.
pub const KIND_NODE_LIST: u32 = 0xFFFF_FFFF;

/// `data`'s top two bits: what the low bits hold.
pub(crate) const DATA_TYPE_MASK: u32 = 0xC000_0000;
pub(crate) const DATA_TYPE_STRING: u32 = 0x4000_0000;
pub(crate) const DATA_TYPE_EXTENDED: u32 = 0x8000_0000;
pub(crate) const DATA_INDEX_MASK: u32 = 0x00FF_FFFF;

/// The `SyntaxKind` values this module needs that both formats number alike
/// (all below 167; `dist/enums/syntaxKind.js` of both packages). The kinds
/// that moved are in [`Kinds`], per format.
pub mod kind {
    /// `SyntaxKind.EndOfFileToken`.
    pub const END_OF_FILE_TOKEN: u32 = 1;
    /// `SyntaxKind.NumericLiteral`.
    pub const NUMERIC_LITERAL: u32 = 8;
    /// `SyntaxKind.BigIntLiteral`.
    pub const BIG_INT_LITERAL: u32 = 9;
    /// `SyntaxKind.StringLiteral`.
    pub const STRING_LITERAL: u32 = 10;
    /// `SyntaxKind.RegularExpressionLiteral`.
    pub const REGULAR_EXPRESSION_LITERAL: u32 = 13;
    /// `SyntaxKind.NoSubstitutionTemplateLiteral`.
    pub const NO_SUBSTITUTION_TEMPLATE_LITERAL: u32 = 14;
    /// `SyntaxKind.TemplateHead`.
    pub const TEMPLATE_HEAD: u32 = 15;
    /// `SyntaxKind.TemplateMiddle`.
    pub const TEMPLATE_MIDDLE: u32 = 16;
    /// `SyntaxKind.TemplateTail`.
    pub const TEMPLATE_TAIL: u32 = 17;
    /// `SyntaxKind.Identifier`.
    pub const IDENTIFIER: u32 = 79;
}

/// The `SyntaxKind` values this module needs whose number depends on the format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Kinds {
    /// `SyntaxKind.InterfaceDeclaration`.
    pub interface_declaration: u32,
    /// `SyntaxKind.SourceFile`.
    pub source_file: u32,
    /// `SyntaxKind.JSDoc`: skipped by `forEachChild`-style traversal.
    pub jsdoc: u32,
}

/// What one protocol version of the binary format looks like to this reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Format {
    /// The protocol version (the metadata word's top byte).
    pub version: u32,
    /// The TypeScript release whose server writes it.
    pub typescript: &'static str,
    /// Bytes in the header.
    pub header_size: usize,
    /// The kinds whose number depends on the version.
    pub kinds: Kinds,
}

/// Protocol version 5, written by TypeScript 7.0.2.
pub const FORMAT_V5: Format = Format {
    version: 5,
    typescript: "7.0.2",
    header_size: 44,
    kinds: Kinds { interface_declaration: 265, source_file: 307, jsdoc: 315 },
};

/// Protocol version 9, written by TypeScript 7.1.0-beta.
pub const FORMAT_V9: Format = Format {
    version: 9,
    typescript: "7.1.0-beta",
    header_size: 64,
    kinds: Kinds { interface_declaration: 266, source_file: 308, jsdoc: 316 },
};

impl Format {
    /// The format of protocol version `version`, if this reader knows it.
    pub fn of_version(version: u32) -> Option<&'static Format> {
        [&FORMAT_V5, &FORMAT_V9].into_iter().find(|format| format.version == version)
    }
}

/// A buffer that is not a source file this reader accepts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AstError {
    /// Shorter than the header.
    #[error("{length} bytes is shorter than the {header_size}-byte header")]
    TooShort {
        /// The buffer's length.
        length: usize,
        /// The header's size (the smallest one's when the version is unknown).
        header_size: usize,
    },
    /// Another protocol version.
    #[error("protocol version {found}, expected one of {PROTOCOL_VERSIONS:?}")]
    Version {
        /// The version found (the metadata's top byte).
        found: u32,
    },
    /// The section offsets are out of order or past the end.
    #[error("section offsets {offsets:?} are not in order within {length} bytes")]
    Sections {
        /// String offsets, strings, extended data, structured data, nodes.
        offsets: [u32; 5],
        /// The buffer's length.
        length: usize,
    },
    /// The node section is not a whole number of records, or lacks the nil node and the root.
    #[error("node section of {length} bytes is not 2 or more whole {NODE_SIZE}-byte nodes")]
    NodeSection {
        /// The section's length.
        length: usize,
    },
    /// A node's links are not what the format allows.
    #[error("node {index}: {problem}")]
    Node {
        /// The node's index.
        index: u32,
        /// What is wrong.
        problem: &'static str,
    },
}

/// A source file in the binary format: section offsets over borrowed bytes.
#[derive(Debug, Clone, Copy)]
pub struct SourceFile<'a> {
    bytes: &'a [u8],
    format: &'static Format,
    string_offsets: usize,
    string_offsets_count: usize,
    strings: &'a [u8],
    extended: &'a [u8],
    nodes: usize,
    count: u32,
}

pub(crate) fn word(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]])
}

impl<'a> SourceFile<'a> {
    /// Checks `bytes` (header, section offsets, node links) and returns the view.
    pub fn new(bytes: &'a [u8]) -> Result<SourceFile<'a>, AstError> {
        if bytes.len() < MIN_HEADER_SIZE {
            return Err(AstError::TooShort { length: bytes.len(), header_size: MIN_HEADER_SIZE });
        }
        let found = word(bytes, 0) >> 24;
        let format = Format::of_version(found).ok_or(AstError::Version { found })?;
        if bytes.len() < format.header_size {
            return Err(AstError::TooShort { length: bytes.len(), header_size: format.header_size });
        }
        let offsets = [word(bytes, 24), word(bytes, 28), word(bytes, 32), word(bytes, 36), word(bytes, 40)];
        let in_order = offsets[0] as usize >= format.header_size
            && offsets.windows(2).all(|pair| pair[0] <= pair[1])
            && offsets[4] as usize <= bytes.len()
            && (offsets[1] - offsets[0]) % 4 == 0;
        if !in_order {
            return Err(AstError::Sections { offsets, length: bytes.len() });
        }
        let [string_offsets, strings, extended, structured, nodes] = offsets.map(|offset| offset as usize);
        let node_bytes = bytes.len() - nodes;
        if node_bytes % NODE_SIZE != 0 || node_bytes / NODE_SIZE < 2 || node_bytes / NODE_SIZE > u32::MAX as usize {
            return Err(AstError::NodeSection { length: node_bytes });
        }
        let file = SourceFile {
            bytes,
            format,
            string_offsets,
            string_offsets_count: (strings - string_offsets) / 4,
            strings: &bytes[strings..extended],
            extended: &bytes[extended..structured],
            nodes,
            count: (node_bytes / NODE_SIZE) as u32,
        };
        file.check_links()?;
        Ok(file)
    }

    /// The links every traversal follows, checked once so that traversals
    /// need no checks of their own.
    fn check_links(&self) -> Result<(), AstError> {
        let fail = |index, problem| Err(AstError::Node { index, problem });
        if self.field(1, FIELD_KIND) == KIND_NODE_LIST {
            return fail(1, "the root is a NodeList");
        }
        if self.field(1, FIELD_PARENT) != 0 || self.field(1, FIELD_NEXT) != 0 {
            return fail(1, "the root has a parent or a sibling");
        }
        for index in 2..self.count {
            let parent = self.field(index, FIELD_PARENT);
            if parent == 0 || parent >= index {
                return fail(index, "its parent is not an earlier node");
            }
            let next = self.field(index, FIELD_NEXT);
            if next != 0 && (next <= index || next >= self.count || self.field(next, FIELD_PARENT) != parent) {
                return fail(index, "its next sibling is not a later node with the same parent");
            }
            if self.field(index, FIELD_KIND) == KIND_NODE_LIST {
                if self.field(parent, FIELD_KIND) == KIND_NODE_LIST {
                    return fail(index, "a NodeList directly inside a NodeList");
                }
                let length = self.field(index, FIELD_DATA);
                if length > 0 && (index + 1 >= self.count || self.field(index + 1, FIELD_PARENT) != index) {
                    return fail(index, "a non-empty NodeList without elements");
                }
            }
        }
        Ok(())
    }

    pub(crate) fn field(&self, index: u32, field: usize) -> u32 {
        word(self.bytes, self.nodes + index as usize * NODE_SIZE + field)
    }

    /// The whole buffer.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The format the header's version names.
    pub fn format(&self) -> &'static Format {
        self.format
    }

    /// The kinds whose number depends on the format.
    pub fn kinds(&self) -> &'static Kinds {
        &self.format.kinds
    }

    /// The source file's node id (version 9 headers; `None` in version 5).
    pub fn node_id(&self) -> Option<u64> {
        self.header_u64(44)
    }

    /// The lease of a retained source file (version 9 headers; `None` in
    /// version 5, `Some(0)` for a file fetched without retaining it).
    pub fn lease(&self) -> Option<u64> {
        self.header_u64(52)
    }

    fn header_u64(&self, at: usize) -> Option<u64> {
        (self.format.header_size >= at + 8)
            .then(|| u64::from(word(self.bytes, at)) | (u64::from(word(self.bytes, at + 4)) << 32))
    }

    /// The 128-bit content hash from the header (hi1, hi0, lo1, lo0 from the top).
    pub fn content_hash(&self) -> u128 {
        let [lo0, lo1, hi0, hi1] = [4, 8, 12, 16].map(|at| u128::from(word(self.bytes, at)));
        (hi1 << 96) | (hi0 << 64) | (lo1 << 32) | lo0
    }

    /// The parse options key from the header.
    pub fn parse_options(&self) -> u32 {
        word(self.bytes, 20)
    }

    /// The number of node records, the nil node and NodeLists included.
    pub fn record_count(&self) -> u32 {
        self.count
    }

    /// The root node (index 1; a `SourceFile` for `getSourceFile` results).
    pub fn root(&self) -> Node<'_> {
        Node::new(self, 1)
    }

    /// The node at `index`, if there is one there (not nil, not a NodeList).
    pub fn node(&self, index: u32) -> Option<Node<'_>> {
        (index >= 1 && index < self.count && self.field(index, FIELD_KIND) != KIND_NODE_LIST)
            .then(|| Node::new(self, index))
    }

    /// The string at `index` of the string table (WTF-8 bytes), if it is in range.
    pub fn string(&self, index: u32) -> Option<&'a [u8]> {
        let index = index as usize;
        if index + 1 >= self.string_offsets_count {
            return None;
        }
        let at = self.string_offsets + index * 4;
        let (start, end) = (word(self.bytes, at) as usize, word(self.bytes, at + 4) as usize);
        self.strings.get(start..end)
    }

    /// The word at `offset` bytes into the extended data, if in range.
    pub(crate) fn extended_word(&self, offset: usize) -> Option<u32> {
        (offset.checked_add(4)? <= self.extended.len()).then(|| word(self.extended, offset))
    }

    /// The root's extended record word `slot` (0: text, 1: file name, 2: path).
    fn root_string(&self, slot: usize) -> Option<&'a [u8]> {
        let root = self.root();
        if root.kind() != self.kinds().source_file {
            return None;
        }
        let offset = root.extended_offset()?;
        self.string(self.extended_word(offset + slot * 4)?)
    }

    /// The file's text (WTF-8), when the root is a `SourceFile`.
    pub fn text(&self) -> Option<&'a [u8]> {
        self.root_string(0)
    }

    /// The file's name, when the root is a `SourceFile`.
    pub fn file_name(&self) -> Option<&'a [u8]> {
        self.root_string(1)
    }

    /// The file's path (canonical name), when the root is a `SourceFile`.
    pub fn path(&self) -> Option<&'a [u8]> {
        self.root_string(2)
    }
}

pub(crate) const FIELD_KIND: usize = 0;
pub(crate) const FIELD_POS: usize = 4;
pub(crate) const FIELD_END: usize = 8;
pub(crate) const FIELD_NEXT: usize = 12;
pub(crate) const FIELD_PARENT: usize = 16;
pub(crate) const FIELD_DATA: usize = 20;
pub(crate) const FIELD_FLAGS: usize = 24;

#[cfg(test)]
mod tests;
