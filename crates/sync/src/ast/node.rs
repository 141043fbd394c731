//! Nodes, NodeLists and the traversals over them.

use std::ops::ControlFlow;

use super::{
    kind, SourceFile, DATA_INDEX_MASK, DATA_TYPE_EXTENDED, DATA_TYPE_MASK, DATA_TYPE_STRING, FIELD_DATA, FIELD_END,
    FIELD_FLAGS, FIELD_KIND, FIELD_NEXT, FIELD_PARENT, FIELD_POS, KIND_NODE_LIST,
};

/// A node: an index into a [`SourceFile`]; every field is read when asked for.
#[derive(Clone, Copy)]
pub struct Node<'f> {
    file: &'f SourceFile<'f>,
    index: u32,
}

impl std::fmt::Debug for Node<'_> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Node")
            .field("index", &self.index)
            .field("kind", &self.kind())
            .field("pos", &self.pos())
            .field("end", &self.end())
            .finish()
    }
}

impl PartialEq for Node<'_> {
    fn eq(&self, other: &Node<'_>) -> bool {
        std::ptr::eq(self.file.bytes(), other.file.bytes()) && self.index == other.index
    }
}

impl Eq for Node<'_> {}

impl<'f> Node<'f> {
    pub(super) fn new(file: &'f SourceFile<'f>, index: u32) -> Node<'f> {
        Node { file, index }
    }

    /// The node's index in the file (stable: the server's node handles use it).
    pub fn index(&self) -> u32 {
        self.index
    }

    /// The `SyntaxKind` value (see [`kind`](super::kind) for the few named here).
    pub fn kind(&self) -> u32 {
        self.file.field(self.index, FIELD_KIND)
    }

    /// Start of the node, leading trivia included (UTF-16 code units in the file's text).
    pub fn pos(&self) -> i32 {
        self.file.field(self.index, FIELD_POS) as i32
    }

    /// End of the node.
    pub fn end(&self) -> i32 {
        self.file.field(self.index, FIELD_END) as i32
    }

    /// The raw `data` word (child mask, string index or extended-data offset, with flag bits).
    pub fn data(&self) -> u32 {
        self.file.field(self.index, FIELD_DATA)
    }

    /// The node flags word.
    pub fn flags(&self) -> u32 {
        self.file.field(self.index, FIELD_FLAGS)
    }

    /// Which of the kind's child properties are present, one bit each in the
    /// order of the kind's property table, when `data` holds a child mask.
    pub fn child_mask(&self) -> Option<u8> {
        let data = self.data();
        (data & DATA_TYPE_MASK == 0).then_some(data as u8)
    }

    /// The logical parent: NodeLists are skipped, as elements take their
    /// list's parent. `None` for the root.
    pub fn parent(&self) -> Option<Node<'f>> {
        let mut parent = self.file.field(self.index, FIELD_PARENT);
        if parent != 0 && self.file.field(parent, FIELD_KIND) == KIND_NODE_LIST {
            parent = self.file.field(parent, FIELD_PARENT);
        }
        (parent != 0).then(|| Node::new(self.file, parent))
    }

    /// Whether the node has any child record (a node, a NodeList, or a JSDoc).
    pub fn has_children(&self) -> bool {
        first_raw_child(self.file, self.index) != 0
    }

    /// The node's text for the kinds that carry one: identifiers and other
    /// string-data nodes, literals, template parts, the source file (WTF-8).
    pub fn text(&self) -> Option<&'f [u8]> {
        let data = self.data();
        match data & DATA_TYPE_MASK {
            DATA_TYPE_STRING => self.file.string(data & DATA_INDEX_MASK),
            DATA_TYPE_EXTENDED if carries_text_in_extended_data(self.file, self.kind()) => {
                let offset = (data & DATA_INDEX_MASK) as usize;
                self.file.string(self.file.extended_word(offset)?)
            }
            _ => None,
        }
    }

    /// The offset of the node's extended record, when `data` points at one.
    pub(super) fn extended_offset(&self) -> Option<usize> {
        let data = self.data();
        (data & DATA_TYPE_MASK == DATA_TYPE_EXTENDED).then_some((data & DATA_INDEX_MASK) as usize)
    }

    /// The child records in order, NodeLists and JSDoc nodes included.
    pub fn raw_children(&self) -> RawChildren<'f> {
        RawChildren { file: self.file, next: first_raw_child(self.file, self.index) }
    }

    /// The children as `forEachChild` visits them: NodeLists flattened into
    /// their elements, JSDoc nodes skipped.
    pub fn children(&self) -> Children<'f> {
        Children { file: self.file, next: first_visible(self.file, first_raw_child(self.file, self.index)) }
    }

    /// Calls `visit` on each child in `forEachChild` order (see
    /// [`Node::children`]) until it breaks; returns the break value.
    pub fn for_each_child<B>(&self, mut visit: impl FnMut(Node<'f>) -> ControlFlow<B>) -> Option<B> {
        for child in self.children() {
            if let ControlFlow::Break(value) = visit(child) {
                return Some(value);
            }
        }
        None
    }

    /// Every node below this one, in the order a recursive `forEachChild`
    /// walk visits them (preorder). Needs no stack: it climbs parent links.
    pub fn descendants(&self) -> Descendants<'f> {
        Descendants {
            file: self.file,
            root: self.index,
            next: first_visible(self.file, first_raw_child(self.file, self.index)),
        }
    }
}

/// Kinds whose extended record starts with the index of their text.
fn carries_text_in_extended_data(file: &SourceFile<'_>, node_kind: u32) -> bool {
    node_kind == file.kinds().source_file
        || matches!(
            node_kind,
            kind::NUMERIC_LITERAL
                | kind::BIG_INT_LITERAL
                | kind::STRING_LITERAL
                | kind::REGULAR_EXPRESSION_LITERAL
                | kind::NO_SUBSTITUTION_TEMPLATE_LITERAL
                | kind::TEMPLATE_HEAD
                | kind::TEMPLATE_MIDDLE
                | kind::TEMPLATE_TAIL
        )
}

/// The first child record of `index`, or 0.
fn first_raw_child(file: &SourceFile<'_>, index: u32) -> u32 {
    let candidate = index + 1;
    if candidate < file.record_count() && file.field(candidate, FIELD_PARENT) == index {
        candidate
    } else {
        0
    }
}

/// The first node `forEachChild` would visit at or after the record `raw`
/// in its sibling chain (0: none).
fn first_visible(file: &SourceFile<'_>, mut raw: u32) -> u32 {
    while raw != 0 {
        let raw_kind = file.field(raw, FIELD_KIND);
        if raw_kind == KIND_NODE_LIST {
            // Elements are never lists and are never skipped (the official walk
            // visits every element); the first one is the record after the list.
            if file.field(raw, FIELD_DATA) > 0 {
                return raw + 1;
            }
        } else if raw_kind != file.kinds().jsdoc
            || file.field(file.field(raw, FIELD_PARENT), FIELD_KIND) == KIND_NODE_LIST
        {
            return raw;
        }
        raw = file.field(raw, FIELD_NEXT);
    }
    0
}

/// The node visited after `index` among its logical siblings (0: none).
fn next_visible(file: &SourceFile<'_>, index: u32) -> u32 {
    let next = file.field(index, FIELD_NEXT);
    if next != 0 {
        return first_visible(file, next);
    }
    let parent = file.field(index, FIELD_PARENT);
    if file.field(parent, FIELD_KIND) == KIND_NODE_LIST {
        // The last element of a list: go on after the list.
        return first_visible(file, file.field(parent, FIELD_NEXT));
    }
    0
}

/// A child record: a node or a NodeList.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Child<'f> {
    /// A node (JSDoc nodes included).
    Node(Node<'f>),
    /// A NodeList.
    List(NodeList<'f>),
}

/// A NodeList record.
#[derive(Clone, Copy)]
pub struct NodeList<'f> {
    file: &'f SourceFile<'f>,
    index: u32,
}

impl std::fmt::Debug for NodeList<'_> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("NodeList").field("index", &self.index).field("len", &self.len()).finish()
    }
}

impl PartialEq for NodeList<'_> {
    fn eq(&self, other: &NodeList<'_>) -> bool {
        std::ptr::eq(self.file.bytes(), other.file.bytes()) && self.index == other.index
    }
}

impl Eq for NodeList<'_> {}

impl<'f> NodeList<'f> {
    /// The record's index in the file.
    pub fn index(&self) -> u32 {
        self.index
    }

    /// The element count the record states.
    pub fn len(&self) -> u32 {
        self.file.field(self.index, FIELD_DATA)
    }

    /// Whether the list has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Start of the list.
    pub fn pos(&self) -> i32 {
        self.file.field(self.index, FIELD_POS) as i32
    }

    /// End of the list.
    pub fn end(&self) -> i32 {
        self.file.field(self.index, FIELD_END) as i32
    }

    /// The elements, following their sibling links.
    pub fn iter(&self) -> RawChildren<'f> {
        let first = if self.is_empty() { 0 } else { self.index + 1 };
        RawChildren { file: self.file, next: first }
    }
}

/// The child records of a node (or the elements of a list) in order.
#[derive(Debug, Clone)]
pub struct RawChildren<'f> {
    file: &'f SourceFile<'f>,
    next: u32,
}

impl<'f> Iterator for RawChildren<'f> {
    type Item = Child<'f>;

    fn next(&mut self) -> Option<Child<'f>> {
        let index = self.next;
        if index == 0 {
            return None;
        }
        self.next = self.file.field(index, FIELD_NEXT);
        Some(if self.file.field(index, FIELD_KIND) == KIND_NODE_LIST {
            Child::List(NodeList { file: self.file, index })
        } else {
            Child::Node(Node::new(self.file, index))
        })
    }
}

/// The children of a node in `forEachChild` order (see [`Node::children`]).
#[derive(Debug, Clone)]
pub struct Children<'f> {
    file: &'f SourceFile<'f>,
    next: u32,
}

impl<'f> Iterator for Children<'f> {
    type Item = Node<'f>;

    fn next(&mut self) -> Option<Node<'f>> {
        let index = self.next;
        if index == 0 {
            return None;
        }
        self.next = next_visible(self.file, index);
        Some(Node::new(self.file, index))
    }
}

/// Every node below a node in recursive `forEachChild` order (see [`Node::descendants`]).
#[derive(Debug, Clone)]
pub struct Descendants<'f> {
    file: &'f SourceFile<'f>,
    root: u32,
    next: u32,
}

impl<'f> Iterator for Descendants<'f> {
    type Item = Node<'f>;

    fn next(&mut self) -> Option<Node<'f>> {
        let index = self.next;
        if index == 0 {
            return None;
        }
        let file = self.file;
        let mut successor = first_visible(file, first_raw_child(file, index));
        let mut climbing = index;
        while successor == 0 {
            successor = next_visible(file, climbing);
            if successor != 0 {
                break;
            }
            // Up to the logical parent; stop at the root of the walk.
            let mut parent = file.field(climbing, FIELD_PARENT);
            if file.field(parent, FIELD_KIND) == KIND_NODE_LIST {
                parent = file.field(parent, FIELD_PARENT);
            }
            if parent == self.root || parent == 0 {
                break;
            }
            climbing = parent;
        }
        self.next = successor;
        Some(Node::new(file, index))
    }
}
