// A reader of the binary source-file format `tsc --api` returns from
// `getSourceFile`, as a lazy view: protocol version 5 (TypeScript 7.0.2) and
// version 9 (TypeScript 7.1.0-beta), told apart by the first word.
//
// Nothing is copied or materialised: a `SourceFile` is a set of section
// offsets over the caller's bytes, and a `Node` is an index into it whose
// fields are read from the bytes when asked for.
//
// Layout (facts from the official clients' `dist/api/node/protocol.js` and
// `node.js` of both packages; integers little-endian):
//
//   0        metadata: protocol version in the top byte (5 << 24 or 9 << 24)
//   4..20    content hash, four words (lo0, lo1, hi0, hi1)
//   20       parse options key
//   24       offset of the string offsets table (pairs of start/end words)
//   28       offset of the string data (WTF-8)
//   32       offset of the extended data (words)
//   36       offset of the structured data (MessagePack)
//   40       offset of the nodes, which run to the end of the buffer
//   44       version 9 only: the source file's node id (u64)
//   52       version 9 only: the lease of a retained file (u64, 0 when not retained)
//   60       version 9 only: offset of binder data (0 when absent; not read)
//
// The header is 44 bytes in version 5 and 64 in version 9; the rest has the
// same layout. The other difference is the `SyntaxKind` numbering: 7.1
// inserted `SourceKeyword` at 167, so every kind from there up is one higher
// (`Format.kinds`).
//
// Each node is 28 bytes: kind, pos, end, next sibling, parent, data, flags.
// Node 0 is nil and node 1 the root. Nodes are in preorder: a node's first
// child, if any, is the record right after it (its parent field names it),
// and the other children follow through `next` (0 ends the chain). A NodeList
// is a record of kind 0xFFFFFFFF whose `data` is its element count; its
// elements are its children and take its parent as their logical parent.
// `data`'s top two bits say what the rest holds: 00 a child-presence mask in
// the low byte, 01 a string index in the low 24 bits, 10 an offset into the
// extended data in the low 24 bits.
//
// `SourceFile.from` checks the header and, in one pass over the records, the
// links every traversal follows (parents before children, `next` forward and
// among siblings, no list directly in a list), so that no traversal of an
// accepted buffer can loop or leave it. This is the reader of the Rust crate
// (`crates/sync/src/ast/`) with the same checks and the same traversal order.

/** Bytes in the smallest header (version 5's). */
export const MIN_HEADER_SIZE = 44;
/** Bytes in one node record. */
export const NODE_SIZE = 28;
/** The kind of a NodeList record. */
export const KIND_NODE_LIST = 0xffff_ffff;

const DATA_TYPE_MASK = 0xc000_0000;
const DATA_TYPE_STRING = 0x4000_0000;
const DATA_TYPE_EXTENDED = 0x8000_0000;
const DATA_INDEX_MASK = 0x00ff_ffff;

const FIELD_KIND = 0;
const FIELD_POS = 4;
const FIELD_END = 8;
const FIELD_NEXT = 12;
const FIELD_PARENT = 16;
const FIELD_DATA = 20;
const FIELD_FLAGS = 24;

/**
 * The `SyntaxKind` values this module needs that both formats number alike
 * (all below 167; `dist/enums/syntaxKind.js` of both packages). The kinds that
 * moved are in `Kinds`, per format.
 */
export const SyntaxKind = {
  EndOfFileToken: 1,
  NumericLiteral: 8,
  BigIntLiteral: 9,
  StringLiteral: 10,
  RegularExpressionLiteral: 13,
  NoSubstitutionTemplateLiteral: 14,
  TemplateHead: 15,
  TemplateMiddle: 16,
  TemplateTail: 17,
  Identifier: 79,
} as const;

/** The `SyntaxKind` values this module needs whose number depends on the format. */
export interface Kinds {
  readonly interfaceDeclaration: number;
  readonly sourceFile: number;
  /** Skipped by `forEachChild`-style traversal when it is a node's direct child. */
  readonly jsDoc: number;
}

/** What one protocol version of the binary format looks like to this reader. */
export interface Format {
  /** The protocol version (the metadata word's top byte). */
  readonly version: number;
  /** The TypeScript release whose server writes it. */
  readonly typescript: string;
  /** Bytes in the header. */
  readonly headerSize: number;
  /** The kinds whose number depends on the version. */
  readonly kinds: Kinds;
}

/** Protocol version 5, written by TypeScript 7.0.2. */
export const FORMAT_V5: Format = Object.freeze({
  version: 5,
  typescript: "7.0.2",
  headerSize: 44,
  kinds: Object.freeze({ interfaceDeclaration: 265, sourceFile: 307, jsDoc: 315 }),
});

/** Protocol version 9, written by TypeScript 7.1.0-beta. */
export const FORMAT_V9: Format = Object.freeze({
  version: 9,
  typescript: "7.1.0-beta",
  headerSize: 64,
  kinds: Object.freeze({ interfaceDeclaration: 266, sourceFile: 308, jsDoc: 316 }),
});

/** The formats this reader understands, oldest first. */
export const FORMATS: readonly Format[] = Object.freeze([FORMAT_V5, FORMAT_V9]);

/** Literal kinds whose extended record starts with the string index of their text (the source file's does too). */
const TEXT_IN_EXTENDED_DATA = new Set<number>([
  SyntaxKind.NumericLiteral,
  SyntaxKind.BigIntLiteral,
  SyntaxKind.StringLiteral,
  SyntaxKind.RegularExpressionLiteral,
  SyntaxKind.NoSubstitutionTemplateLiteral,
  SyntaxKind.TemplateHead,
  SyntaxKind.TemplateMiddle,
  SyntaxKind.TemplateTail,
]);

/** Why a buffer is not a source file this reader accepts (mirrors the Rust `AstError` variants). */
export type AstErrorDetail =
  | { readonly reason: "too-short"; readonly length: number; readonly headerSize: number }
  | { readonly reason: "version"; readonly found: number }
  | { readonly reason: "sections"; readonly offsets: readonly number[]; readonly length: number }
  | { readonly reason: "node-section"; readonly length: number }
  | { readonly reason: "node"; readonly index: number; readonly problem: string };

function describe(detail: AstErrorDetail): string {
  switch (detail.reason) {
    case "too-short":
      return `${detail.length} bytes is shorter than the ${detail.headerSize}-byte header`;
    case "version":
      return `protocol version ${detail.found}, expected one of [${FORMATS.map((format) => format.version).join(", ")}]`;
    case "sections":
      return `section offsets [${detail.offsets.join(", ")}] are not in order within ${detail.length} bytes`;
    case "node-section":
      return `node section of ${detail.length} bytes is not 2 or more whole ${NODE_SIZE}-byte nodes`;
    case "node":
      return `node ${detail.index}: ${detail.problem}`;
  }
}

/** A buffer that is not a source file this reader accepts. */
export class AstError extends Error {
  override readonly name = "AstError";
  constructor(readonly detail: AstErrorDetail) {
    super(describe(detail));
  }
}

const lossyText = new TextDecoder("utf-8");

/** A source file in the binary format: section offsets over the caller's bytes (not copied). */
export class SourceFile {
  private readonly view: DataView;
  private readonly stringOffsets: number;
  private readonly stringOffsetsCount: number;
  private readonly strings: number;
  private readonly stringsEnd: number;
  private readonly extended: number;
  private readonly extendedEnd: number;
  private readonly nodes: number;
  /** The number of node records, the nil node and NodeLists included. */
  readonly recordCount: number;

  private constructor(
    readonly bytes: Uint8Array,
    /** The format the header's version names. */
    readonly format: Format,
    view: DataView,
    offsets: readonly [number, number, number, number, number],
  ) {
    const [stringOffsets, strings, extended, structured, nodes] = offsets;
    this.view = view;
    this.stringOffsets = stringOffsets;
    this.stringOffsetsCount = (strings - stringOffsets) / 4;
    this.strings = strings;
    this.stringsEnd = extended;
    this.extended = extended;
    this.extendedEnd = structured;
    this.nodes = nodes;
    this.recordCount = (bytes.length - nodes) / NODE_SIZE;
  }

  /**
   * Checks `bytes` (header, section offsets, node links) and returns the
   * view. The bytes are not copied: a client's result must be used before
   * the client's next request, or copied first.
   */
  static from(bytes: Uint8Array): SourceFile {
    if (bytes.length < MIN_HEADER_SIZE) {
      throw new AstError({ reason: "too-short", length: bytes.length, headerSize: MIN_HEADER_SIZE });
    }
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const found = view.getUint32(0, true) >>> 24;
    const format = FORMATS.find((candidate) => candidate.version === found);
    if (format === undefined) throw new AstError({ reason: "version", found });
    if (bytes.length < format.headerSize) {
      throw new AstError({ reason: "too-short", length: bytes.length, headerSize: format.headerSize });
    }
    const offsets = [24, 28, 32, 36, 40].map((at) => view.getUint32(at, true)) as [number, number, number, number, number];
    const inOrder =
      offsets[0] >= format.headerSize &&
      offsets.every((offset, index) => index === 0 || (offsets[index - 1] as number) <= offset) &&
      offsets[4] <= bytes.length &&
      (offsets[1] - offsets[0]) % 4 === 0;
    if (!inOrder) throw new AstError({ reason: "sections", offsets, length: bytes.length });
    const nodeBytes = bytes.length - offsets[4];
    if (nodeBytes % NODE_SIZE !== 0 || nodeBytes / NODE_SIZE < 2) {
      throw new AstError({ reason: "node-section", length: nodeBytes });
    }
    const file = new SourceFile(bytes, format, view, offsets);
    file.checkLinks();
    return file;
  }

  /** The links every traversal follows, checked once so that traversals need no checks of their own. */
  private checkLinks(): void {
    const fail = (index: number, problem: string): never => {
      throw new AstError({ reason: "node", index, problem });
    };
    const count = this.recordCount;
    if (this.field(1, FIELD_KIND) === KIND_NODE_LIST) fail(1, "the root is a NodeList");
    if (this.field(1, FIELD_PARENT) !== 0 || this.field(1, FIELD_NEXT) !== 0) fail(1, "the root has a parent or a sibling");
    for (let index = 2; index < count; index++) {
      const parent = this.field(index, FIELD_PARENT);
      if (parent === 0 || parent >= index) fail(index, "its parent is not an earlier node");
      const next = this.field(index, FIELD_NEXT);
      if (next !== 0 && (next <= index || next >= count || this.field(next, FIELD_PARENT) !== parent)) {
        fail(index, "its next sibling is not a later node with the same parent");
      }
      if (this.field(index, FIELD_KIND) === KIND_NODE_LIST) {
        if (this.field(parent, FIELD_KIND) === KIND_NODE_LIST) fail(index, "a NodeList directly inside a NodeList");
        const length = this.field(index, FIELD_DATA);
        if (length > 0 && (index + 1 >= count || this.field(index + 1, FIELD_PARENT) !== index)) {
          fail(index, "a non-empty NodeList without elements");
        }
      }
    }
  }

  /** @internal A word of record `index` (no bounds check: indices come from checked links). */
  field(index: number, field: number): number {
    return this.view.getUint32(this.nodes + index * NODE_SIZE + field, true);
  }

  /** The 128-bit content hash from the header (hi1, hi0, lo1, lo0 from the top). */
  get contentHash(): bigint {
    const [lo0, lo1, hi0, hi1] = [4, 8, 12, 16].map((at) => BigInt(this.view.getUint32(at, true))) as [
      bigint,
      bigint,
      bigint,
      bigint,
    ];
    return (hi1 << 96n) | (hi0 << 64n) | (lo1 << 32n) | lo0;
  }

  /** The parse options key from the header. */
  get parseOptions(): number {
    return this.view.getUint32(20, true);
  }

  /** The kinds whose number depends on the format. */
  get kinds(): Kinds {
    return this.format.kinds;
  }

  /** The source file's node id (version 9 headers; `undefined` in version 5). */
  get nodeId(): bigint | undefined {
    return this.format.headerSize >= 52 ? this.view.getBigUint64(44, true) : undefined;
  }

  /** The lease of a retained source file (version 9; `undefined` in version 5, 0 for a file fetched without retaining it). */
  get lease(): bigint | undefined {
    return this.format.headerSize >= 60 ? this.view.getBigUint64(52, true) : undefined;
  }

  /** The root node (index 1; a `SourceFile` for `getSourceFile` results). */
  get root(): Node {
    return new Node(this, 1);
  }

  /** The node at `index`, if there is one there (not nil, not a NodeList). */
  node(index: number): Node | undefined {
    return Number.isInteger(index) && index >= 1 && index < this.recordCount && this.field(index, FIELD_KIND) !== KIND_NODE_LIST
      ? new Node(this, index)
      : undefined;
  }

  /** The string at `index` of the string table (WTF-8 bytes, a view), if it is in range. */
  string(index: number): Uint8Array | undefined {
    if (!Number.isInteger(index) || index < 0 || index + 1 >= this.stringOffsetsCount) return undefined;
    const at = this.stringOffsets + index * 4;
    const start = this.view.getUint32(at, true);
    const end = this.view.getUint32(at + 4, true);
    if (start > end || this.strings + end > this.stringsEnd) return undefined;
    return this.bytes.subarray(this.strings + start, this.strings + end);
  }

  /** @internal The word at `offset` bytes into the extended data, if in range. */
  extendedWord(offset: number): number | undefined {
    return offset + 4 <= this.extendedEnd - this.extended ? this.view.getUint32(this.extended + offset, true) : undefined;
  }

  /** The root's extended record word `slot` (0: text, 1: file name, 2: path). */
  private rootString(slot: number): Uint8Array | undefined {
    const root = this.root;
    if (root.kind !== this.format.kinds.sourceFile) return undefined;
    const offset = root.extendedOffset();
    if (offset === undefined) return undefined;
    const index = this.extendedWord(offset + slot * 4);
    return index === undefined ? undefined : this.string(index);
  }

  /** The file's text (WTF-8 bytes), when the root is a `SourceFile`. */
  get text(): Uint8Array | undefined {
    return this.rootString(0);
  }

  /** The file's name, when the root is a `SourceFile`. */
  get fileName(): Uint8Array | undefined {
    return this.rootString(1);
  }

  /** The file's path (canonical name), when the root is a `SourceFile`. */
  get path(): Uint8Array | undefined {
    return this.rootString(2);
  }
}

/** A node: an index into a `SourceFile`; every field is read when asked for. */
export class Node {
  /** @internal */
  constructor(
    readonly file: SourceFile,
    readonly index: number,
  ) {}

  /** The `SyntaxKind` value. */
  get kind(): number {
    return this.file.field(this.index, FIELD_KIND);
  }

  /** Start of the node, leading trivia included (UTF-16 code units in the file's text). */
  get pos(): number {
    return this.file.field(this.index, FIELD_POS) | 0;
  }

  /** End of the node. */
  get end(): number {
    return this.file.field(this.index, FIELD_END) | 0;
  }

  /** The raw `data` word (child mask, string index or extended-data offset, with flag bits). */
  get data(): number {
    return this.file.field(this.index, FIELD_DATA);
  }

  /** The node flags word. */
  get flags(): number {
    return this.file.field(this.index, FIELD_FLAGS);
  }

  /** Which of the kind's child properties are present (one bit each in the order of the kind's property table), when `data` holds a mask. */
  get childMask(): number | undefined {
    const data = this.data;
    return (data & DATA_TYPE_MASK) === 0 ? data & 0xff : undefined;
  }

  /** The logical parent (NodeLists skipped: elements take their list's parent); `undefined` for the root. */
  get parent(): Node | undefined {
    const parent = logicalParent(this.file, this.index);
    return parent === 0 ? undefined : new Node(this.file, parent);
  }

  /** Whether the node has any child record (a node, a NodeList, or a JSDoc). */
  get hasChildren(): boolean {
    return firstRawChild(this.file, this.index) !== 0;
  }

  /** The node's text for the kinds that carry one (identifiers and other string-data nodes, literals, template parts, the source file): WTF-8 bytes, a view. */
  get text(): Uint8Array | undefined {
    const data = this.data;
    const type = (data & DATA_TYPE_MASK) >>> 0;
    if (type === DATA_TYPE_STRING) return this.file.string(data & DATA_INDEX_MASK);
    const kind = this.kind;
    if (type === DATA_TYPE_EXTENDED && (TEXT_IN_EXTENDED_DATA.has(kind) || kind === this.file.format.kinds.sourceFile)) {
      const index = this.file.extendedWord(data & DATA_INDEX_MASK);
      return index === undefined ? undefined : this.file.string(index);
    }
    return undefined;
  }

  /** `text` decoded (lone surrogates, which WTF-8 can hold, become U+FFFD). */
  get textString(): string | undefined {
    const text = this.text;
    return text === undefined ? undefined : lossyText.decode(text);
  }

  /** @internal The offset of the node's extended record, when `data` points at one. */
  extendedOffset(): number | undefined {
    const data = this.data;
    return (data & DATA_TYPE_MASK) >>> 0 === DATA_TYPE_EXTENDED ? data & DATA_INDEX_MASK : undefined;
  }

  /** The child records in order, NodeLists and JSDoc nodes included. */
  rawChildren(): IterableIterator<Node | NodeList> {
    return new RawChildren(this.file, firstRawChild(this.file, this.index));
  }

  /** The children as `forEachChild` visits them: NodeLists flattened into their elements, direct JSDoc children skipped. */
  children(): IterableIterator<Node> {
    return new Children(this.file, firstVisible(this.file, firstRawChild(this.file, this.index)));
  }

  /** Calls `visit` on each child in `forEachChild` order until it returns a truthy value, which is returned. */
  forEachChild<T>(visit: (child: Node) => T | undefined): T | undefined {
    for (let index = firstVisible(this.file, firstRawChild(this.file, this.index)); index !== 0; ) {
      const next = nextVisible(this.file, index);
      const result = visit(new Node(this.file, index));
      if (result) return result;
      index = next;
    }
    return undefined;
  }

  /** Every node below this one, in the order a recursive `forEachChild` walk visits them (preorder); needs no stack. */
  descendants(): IterableIterator<Node> {
    return new Descendants(this.file, this.index);
  }

  /** Whether `other` is the same record of the same bytes. */
  equals(other: Node): boolean {
    return this.file.bytes === other.file.bytes && this.index === other.index;
  }
}

/** A NodeList record. */
export class NodeList {
  /** @internal */
  constructor(
    readonly file: SourceFile,
    readonly index: number,
  ) {}

  /** The element count the record states. */
  get length(): number {
    return this.file.field(this.index, FIELD_DATA);
  }

  /** Start of the list. */
  get pos(): number {
    return this.file.field(this.index, FIELD_POS) | 0;
  }

  /** End of the list. */
  get end(): number {
    return this.file.field(this.index, FIELD_END) | 0;
  }

  /** The elements, following their sibling links. */
  elements(): IterableIterator<Node | NodeList> {
    return new RawChildren(this.file, this.length === 0 ? 0 : this.index + 1);
  }
}

/** The logical parent of record `index` (a list's parent for list elements), 0 for none. */
function logicalParent(file: SourceFile, index: number): number {
  let parent = file.field(index, FIELD_PARENT);
  if (parent !== 0 && file.field(parent, FIELD_KIND) === KIND_NODE_LIST) parent = file.field(parent, FIELD_PARENT);
  return parent;
}

/** The first child record of `index`, or 0. */
function firstRawChild(file: SourceFile, index: number): number {
  const candidate = index + 1;
  return candidate < file.recordCount && file.field(candidate, FIELD_PARENT) === index ? candidate : 0;
}

/** The first node `forEachChild` would visit at or after record `raw` in its sibling chain (0: none). */
function firstVisible(file: SourceFile, raw: number): number {
  while (raw !== 0) {
    const kind = file.field(raw, FIELD_KIND);
    if (kind === KIND_NODE_LIST) {
      // Elements are never lists and are never skipped (the official walk
      // visits every element); the first one is the record after the list.
      if (file.field(raw, FIELD_DATA) > 0) return raw + 1;
    } else if (kind !== file.format.kinds.jsDoc || file.field(file.field(raw, FIELD_PARENT), FIELD_KIND) === KIND_NODE_LIST) {
      return raw;
    }
    raw = file.field(raw, FIELD_NEXT);
  }
  return 0;
}

/** The node visited after `index` among its logical siblings (0: none). */
function nextVisible(file: SourceFile, index: number): number {
  const next = file.field(index, FIELD_NEXT);
  if (next !== 0) return firstVisible(file, next);
  const parent = file.field(index, FIELD_PARENT);
  // The last element of a list: go on after the list.
  if (file.field(parent, FIELD_KIND) === KIND_NODE_LIST) return firstVisible(file, file.field(parent, FIELD_NEXT));
  return 0;
}

class RawChildren implements IterableIterator<Node | NodeList> {
  constructor(
    private readonly file: SourceFile,
    private next_: number,
  ) {}
  [Symbol.iterator](): this {
    return this;
  }
  next(): IteratorResult<Node | NodeList> {
    const index = this.next_;
    if (index === 0) return { done: true, value: undefined };
    this.next_ = this.file.field(index, FIELD_NEXT);
    const value = this.file.field(index, FIELD_KIND) === KIND_NODE_LIST ? new NodeList(this.file, index) : new Node(this.file, index);
    return { done: false, value };
  }
}

class Children implements IterableIterator<Node> {
  constructor(
    private readonly file: SourceFile,
    private next_: number,
  ) {}
  [Symbol.iterator](): this {
    return this;
  }
  next(): IteratorResult<Node> {
    const index = this.next_;
    if (index === 0) return { done: true, value: undefined };
    this.next_ = nextVisible(this.file, index);
    return { done: false, value: new Node(this.file, index) };
  }
}

class Descendants implements IterableIterator<Node> {
  private next_: number;
  constructor(
    private readonly file: SourceFile,
    private readonly root: number,
  ) {
    this.next_ = firstVisible(file, firstRawChild(file, root));
  }
  [Symbol.iterator](): this {
    return this;
  }
  next(): IteratorResult<Node> {
    const index = this.next_;
    if (index === 0) return { done: true, value: undefined };
    const file = this.file;
    let successor = firstVisible(file, firstRawChild(file, index));
    let climbing = index;
    while (successor === 0) {
      successor = nextVisible(file, climbing);
      if (successor !== 0) break;
      // Up to the logical parent; stop at the root of the walk.
      const parent = logicalParent(file, climbing);
      if (parent === this.root || parent === 0) break;
      climbing = parent;
    }
    this.next_ = successor;
    return { done: false, value: new Node(file, index) };
  }
}
