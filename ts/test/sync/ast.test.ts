// The binary source-file reader over hand-built buffers (the real files of
// `tsc --api` are read in tsc-api.test.ts).

import assert from "node:assert/strict";
import { test } from "node:test";

import {
  AstError,
  type AstErrorDetail,
  type Format,
  FORMAT_V5,
  FORMAT_V9,
  FORMATS,
  KIND_NODE_LIST,
  Node,
  NodeList,
  SourceFile,
  SyntaxKind,
} from "../../src/sync/ast.js";

/** One node record: kind, pos, end, next, parent, data (flags are 0). */
type Record = [number, number, number, number, number, number];

const STRING = 0x4000_0000;
const EXTENDED = 0x8000_0000;

/** Builds a buffer in `format`'s layout (its header size) from its parts, with `version` (default: the format's) in the metadata word. */
function build(format: Format, strings: string[], extended: number[], records: Record[], version = format.version): Uint8Array {
  const offsets: number[] = [];
  const data: number[] = [];
  for (const value of strings) {
    offsets.push(data.length);
    data.push(...new TextEncoder().encode(value));
    offsets.push(data.length);
  }
  const stringOffsets = format.headerSize;
  const stringData = stringOffsets + 4 * offsets.length;
  const extendedData = stringData + data.length;
  const structured = extendedData + 4 * extended.length;
  const header = [version * 0x100_0000, 0x1111, 0x2222, 0x3333, 0x4444, 7, stringOffsets, stringData, extendedData, structured, structured];
  // Version 9: node id 0x1_0000_0005, lease 0, no binder data.
  if (format.headerSize === 64) header.push(5, 1, 0, 0, 0);
  assert.equal(header.length * 4, format.headerSize);
  const words = [...header, ...offsets];
  const out = new Uint8Array(4 * words.length + data.length + 4 * extended.length + 28 * records.length);
  const view = new DataView(out.buffer);
  let at = 0;
  for (const word of words) {
    view.setUint32(at, word, true);
    at += 4;
  }
  out.set(data, at);
  at += data.length;
  for (const word of [...extended, ...records.flatMap((record) => [...record, 0])]) {
    view.setUint32(at, word, true);
    at += 4;
  }
  return out;
}

const TEXT = "interface Point {}";

// `interface Point {}` with a JSDoc on the interface, a JSDoc as a list
// element, and an empty list:
//
// 1 SourceFile
// ├─ 2 NodeList(2)
// │  ├─ 3 InterfaceDeclaration
// │  │  ├─ 4 JSDoc          (skipped: a direct child)
// │  │  └─ 5 Identifier "Point"
// │  └─ 6 JSDoc             (visited: a list element)
// ├─ 7 NodeList(0)
// └─ 8 EndOfFileToken
function sampleRecords(format: Format): Record[] {
  const kinds = format.kinds;
  return [
    [0, 0, 0, 0, 0, 0],
    [kinds.sourceFile, 0, 18, 0, 0, EXTENDED],
    [KIND_NODE_LIST, 0, 18, 7, 1, 2],
    [kinds.interfaceDeclaration, 0, 18, 6, 2, 0b10],
    [kinds.jsDoc, 0, 0, 5, 3, 0],
    [SyntaxKind.Identifier, 9, 15, 0, 3, STRING | 2],
    [kinds.jsDoc, 18, 18, 0, 2, 0],
    [KIND_NODE_LIST, 18, 18, 8, 1, 0],
    [SyntaxKind.EndOfFileToken, 18, 18, 0, 1, 0],
  ];
}

const sample = (format: Format, records = sampleRecords(format)): Uint8Array => build(format, [TEXT, "Point", "/a.ts"], [0, 4, 4], records);
const file = (format: Format): SourceFile => SourceFile.from(sample(format));
const indices = (nodes: Iterable<Node>): number[] => [...nodes].map((node) => node.index);
const decode = (value: Uint8Array | undefined): string | undefined => (value === undefined ? undefined : new TextDecoder().decode(value));
const nodeAt = (source: SourceFile, index: number): Node => source.node(index) ?? assert.fail(`no node ${index}`);

function errorOf(bytes: Uint8Array): AstErrorDetail {
  try {
    SourceFile.from(bytes);
  } catch (error) {
    assert.ok(error instanceof AstError, String(error));
    return error.detail;
  }
  assert.fail("the buffer was accepted");
}

test("a short buffer and other versions are refused", () => {
  assert.deepEqual(errorOf(new Uint8Array(43)), { reason: "too-short", length: 43, headerSize: 44 });
  // A version-9 word with only a version-5 header behind it.
  const short = new Uint8Array(60);
  short[3] = 9;
  assert.deepEqual(errorOf(short), { reason: "too-short", length: 60, headerSize: 64 });
  for (const version of [4, 6, 8, 10]) {
    assert.deepEqual(errorOf(build(FORMAT_V5, [TEXT], [0], sampleRecords(FORMAT_V5), version)), { reason: "version", found: version });
  }
  assert.throws(() => SourceFile.from(build(FORMAT_V5, [TEXT], [0], sampleRecords(FORMAT_V5), 8)), /protocol version 8, expected one of \[5, 9\]/);
});

test("each version numbers the moved kinds one higher", () => {
  // 7.1 inserted `SourceKeyword` at 167: every kind from there up moved by one.
  const [v5, v9] = [FORMAT_V5.kinds, FORMAT_V9.kinds];
  assert.deepEqual([v9.interfaceDeclaration, v9.sourceFile, v9.jsDoc], [v5.interfaceDeclaration + 1, v5.sourceFile + 1, v5.jsDoc + 1]);
  assert.deepEqual([FORMAT_V5.headerSize, FORMAT_V9.headerSize], [44, 64]);
});

for (const format of FORMATS) {
  test(`v${format.version}: header fields are read`, () => {
    const source = file(format);
    assert.equal(source.recordCount, 9);
    assert.equal(source.parseOptions, 7);
    assert.equal(source.contentHash, (0x4444n << 96n) | (0x3333n << 64n) | (0x2222n << 32n) | 0x1111n);
    assert.equal(decode(source.text), TEXT);
    assert.equal(decode(source.fileName), "/a.ts");
    assert.equal(decode(source.path), "/a.ts");
    assert.equal(source.format, format);
    assert.deepEqual([source.nodeId, source.lease], format.version === 9 ? [0x1_0000_0005n, 0n] : [undefined, undefined]);
  });

  test(`v${format.version}: children flatten lists and skip direct JSDoc`, () => {
    const source = file(format);
    assert.deepEqual(indices(source.root.children()), [3, 6, 8]);
    assert.deepEqual(indices(nodeAt(source, 3).children()), [5]);
    assert.deepEqual(indices(nodeAt(source, 5).children()), []);
  });

  test(`v${format.version}: descendants are the recursive walk in preorder`, () => {
    const source = file(format);
    assert.deepEqual(indices(source.root.descendants()), [3, 5, 6, 8]);
    assert.deepEqual(indices(nodeAt(source, 3).descendants()), [5]);
    const recursive: number[] = [];
    const walk = (node: Node): void => {
      node.forEachChild((child) => {
        recursive.push(child.index);
        walk(child);
      });
    };
    walk(source.root);
    assert.deepEqual(indices(source.root.descendants()), recursive);
  });

  test(`v${format.version}: raw children keep lists and JSDoc`, () => {
    const source = file(format);
    const raw = [...source.root.rawChildren()];
    assert.equal(raw.length, 3);
    const [statements, empty, end] = raw;
    assert.ok(statements instanceof NodeList && empty instanceof NodeList && end instanceof Node);
    assert.deepEqual([statements.index, statements.length, empty.length, end.kind], [2, 2, 0, SyntaxKind.EndOfFileToken]);
    assert.deepEqual([...empty.elements()], []);
    assert.deepEqual(
      [...statements.elements()].map((child) => (child instanceof Node ? child.index : assert.fail("a list in a list"))),
      [3, 6],
    );
    assert.equal([...nodeAt(source, 3).rawChildren()].length, 2);
  });

  test(`v${format.version}: the parent skips lists and the root has none`, () => {
    const source = file(format);
    assert.ok(nodeAt(source, 3).parent?.equals(source.root));
    assert.ok(nodeAt(source, 5).parent?.equals(nodeAt(source, 3)));
    assert.equal(source.root.parent, undefined);
    assert.equal(source.node(2), undefined, "a list index is not a node");
    assert.equal(source.node(0), undefined);
    assert.equal(source.node(9), undefined);
  });

  test(`v${format.version}: node fields and text`, () => {
    const source = file(format);
    const identifier = nodeAt(source, 5);
    assert.deepEqual([identifier.kind, identifier.pos, identifier.end], [SyntaxKind.Identifier, 9, 15]);
    assert.equal(identifier.textString, "Point");
    assert.equal(identifier.childMask, undefined);
    assert.equal(nodeAt(source, 3).childMask, 0b10);
    assert.equal(nodeAt(source, 3).text, undefined);
    assert.equal(decode(source.root.text), TEXT);
    assert.ok(source.root.hasChildren && !identifier.hasChildren);
  });

  test(`v${format.version}: forEachChild stops at the first truthy result`, () => {
    const source = file(format);
    const seen: number[] = [];
    const found = source.root.forEachChild((child) => {
      seen.push(child.index);
      return child.kind === format.kinds.jsDoc ? child.index : undefined;
    });
    assert.deepEqual([found, seen], [6, [3, 6]]);
  });

  test(`v${format.version}: out-of-range strings are undefined`, () => {
    const source = file(format);
    // A string's index is the position of its start word in the offsets table.
    assert.equal(decode(source.string(2)), "Point");
    assert.equal(decode(source.string(4)), "/a.ts");
    assert.equal(source.string(5), undefined);
    assert.equal(source.string(0xffff_ffff), undefined);
    assert.equal(source.string(-1), undefined);
  });

  test(`v${format.version}: the view does not copy the bytes`, () => {
    const bytes = sample(format);
    const source = SourceFile.from(bytes);
    assert.equal(source.text?.buffer, bytes.buffer);
    // A view at an offset into a larger buffer reads the same.
    const padded = new Uint8Array(bytes.length + 8);
    padded.set(bytes, 8);
    assert.deepEqual(indices(SourceFile.from(padded.subarray(8)).root.descendants()), [3, 5, 6, 8]);
  });

  test(`v${format.version}: sections out of order are refused`, () => {
    const bytes = sample(format);
    const view = new DataView(bytes.buffer);
    // The strings section after the extended data.
    view.setUint32(28, view.getUint32(32, true) + 4, true);
    assert.equal(errorOf(bytes).reason, "sections");
    const past = sample(format);
    new DataView(past.buffer).setUint32(40, past.length + 28, true);
    assert.equal(errorOf(past).reason, "sections");
    const inHeader = sample(format);
    new DataView(inHeader.buffer).setUint32(24, format.headerSize - 4, true); // string offsets inside the header
    assert.equal(errorOf(inHeader).reason, "sections");
  });

  test(`v${format.version}: a partial node section is refused`, () => {
    const bytes = sample(format);
    assert.equal(errorOf(bytes.subarray(0, bytes.length - 1)).reason, "node-section");
    assert.deepEqual(errorOf(build(format, [], [], [[0, 0, 0, 0, 0, 0]])), { reason: "node-section", length: 28 });
  });

  const withRecord = (index: number, record: Record): Uint8Array => {
    const records = sampleRecords(format);
    records[index] = record;
    return sample(format, records);
  };

  test(`v${format.version}: broken links are refused with the node`, () => {
    const kinds = format.kinds;
    // [record replaced, new record, the node the check fails at]
    const cases: [number, Record, number][] = [
      // A node that is its own parent.
      [4, [kinds.jsDoc, 0, 0, 5, 4, 0], 4],
      // A parent after the node: its previous sibling's link now leads to
      // another parent, which is where the check stops.
      [8, [SyntaxKind.EndOfFileToken, 18, 18, 0, 9, 0], 7],
      // A next sibling that points backwards (would loop).
      [5, [SyntaxKind.Identifier, 9, 15, 4, 3, STRING | 2], 5],
      // A next sibling with another parent.
      [3, [kinds.interfaceDeclaration, 0, 18, 8, 2, 0b10], 3],
      // A next sibling past the end.
      [8, [SyntaxKind.EndOfFileToken, 18, 18, 99, 1, 0], 8],
      // A list claiming elements it does not have.
      [7, [KIND_NODE_LIST, 18, 18, 8, 1, 3], 7],
    ];
    for (const [index, record, failing] of cases) {
      const detail = errorOf(withRecord(index, record));
      assert.ok(detail.reason === "node" && detail.index === failing, `${JSON.stringify(record)}: ${JSON.stringify(detail)}`);
    }
    const rootList = errorOf(withRecord(1, [KIND_NODE_LIST, 0, 18, 0, 0, 2]));
    assert.ok(rootList.reason === "node" && rootList.index === 1);
  });

  test(`v${format.version}: a list inside a list is refused`, () => {
    const records = sampleRecords(format);
    records[6] = [KIND_NODE_LIST, 18, 18, 0, 2, 0];
    const detail = errorOf(build(format, [TEXT], [0], records));
    assert.ok(detail.reason === "node" && detail.index === 6, JSON.stringify(detail));
  });
}
