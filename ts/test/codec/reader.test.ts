import assert from "node:assert/strict";
import { test } from "node:test";

import { JArray, JNumber, JObject, JsonSyntaxError, nestingExceeds, parse } from "../../src/codec/reader.js";

function syntaxError(text: string): JsonSyntaxError {
  try {
    parse(text);
  } catch (err) {
    assert.ok(err instanceof JsonSyntaxError);
    return err;
  }
  assert.fail(`parsed: ${text}`);
}

test("objects keep every member in received order with the span of its value", () => {
  const text = '{"a": 1, "b" :[true], "a":"x"}';
  const node = parse(text);
  assert.ok(node instanceof JObject);
  assert.deepEqual(
    node.members.map((m) => [m.key, text.slice(m.start, m.end)]),
    [["a", "1"], ["b", "[true]"], ["a", '"x"']],
  );
  const items = (node.members[1]?.value as JArray).items;
  assert.deepEqual(items, [true]);
});

test("numbers keep their text, so integers beyond 2^53 keep every digit", () => {
  const node = parse("[18446744073709551615, -0, 1.50, 1e2, 7]") as JArray;
  const numbers = node.items as JNumber[];
  assert.deepEqual(numbers.map((n) => n.text), ["18446744073709551615", "-0", "1.50", "1e2", "7"]);
  assert.deepEqual(numbers.map((n) => n.integer), [true, false, false, false, true]);
});

test("escapes are decoded, surrogate pairs joined", () => {
  assert.equal(parse('"a\\u00e9\\n\\/\\ud83d\\ude00"'), "aé\n/😀");
});

test("an input cut short is an end-of-input failure, anything else is not", () => {
  for (const text of ['{"a":', '{"a"', "tru", "-", '"abc', '"\\u12', '"a\\u0000', "[1,"]) {
    assert.equal(syntaxError(text).eof, true, text);
  }
  for (const text of ['{"a" 1}', "[1,]", "01", '"a\tb"', '"\\x"', "nul1", "{} x", "'a'"]) {
    assert.equal(syntaxError(text).eof, false, text);
  }
});

test("nesting is counted outside strings only", () => {
  assert.equal(nestingExceeds("[[[]]]", 3), false);
  assert.equal(nestingExceeds("[[[[]]]]", 3), true);
  assert.equal(nestingExceeds('["[[[[[["]', 3), false);
  assert.equal(nestingExceeds('["\\"[[[["]', 1), false);
});
