"""The emitter toolkit: Writer blocks, doc comments, string literals, name spelling."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

from agentproto_codegen import names
from agentproto_codegen.emit import DocStyle, Writer, doc_comment, first_paragraph, python_str, reflow, rust_str, ts_str

# Strings that stress every literal form: quotes, backslashes, control characters,
# non-ASCII (printable or not), separators, astral characters, a lone surrogate.
TRICKY = [
    "",
    "plain",
    'say "hi"',
    "back\\slash \\n not a newline",
    "tab\there\nnewline\rreturn",
    "nul\0 then 1: \0" + "1",
    "bell \x07 escape \x1b del \x7f",
    "café — naïve",
    "zero\u200bwidth, bidi\u202e, nbsp\u00a0, line sep\u2028 para sep\u2029",
    "emoji 😀 and tag \U000e0001",
    "${not a template} `backtick` 'single'",
]


class WriterTests(unittest.TestCase):
    def test_blocks_nest_and_close(self) -> None:
        out = Writer()
        with out.block("impl Foo {"):
            out.line("fn a() {}")
            with out.block("fn b() -> u8 {"):
                out.line("1")
            out.line()
            with out.block("const ALL: &[u8] = &[", "];"):
                out.line("1,")
        out.line("// after")
        self.assertEqual(
            out.text(),
            "impl Foo {\n    fn a() {}\n    fn b() -> u8 {\n        1\n    }\n\n    const ALL: &[u8] = &[\n        1,\n    ];\n}\n// after\n",
        )

    def test_several_blocks_in_one_with_close_innermost_first(self) -> None:
        out = Writer()
        with out.block("a {"), out.block("b {", "};"), out.block("c {", ")"):
            out.line("x")
        self.assertEqual(out.text(), "a {\n    b {\n        c {\n            x\n        )\n    };\n}\n")

    def test_indent_unit_and_plain_indent(self) -> None:
        out = Writer(unit="  ")
        out.line("class A:")
        with out.indent():
            out.line("x = 1")
            with out.indent():
                out.line("y")
        out.line("z")
        self.assertEqual(out.text(), "class A:\n  x = 1\n    y\nz\n")

    def test_w_is_line_and_keeps_pre_indented_text(self) -> None:
        out = Writer()
        out.w("    already indented")
        with out.indent():
            out.w("x")
        self.assertEqual(out.text(), "    already indented\n    x\n")

    def test_multi_line_text_is_indented_line_by_line_without_trailing_blanks(self) -> None:
        out = Writer()
        with out.indent():
            out.line("a\n\nb")
        self.assertEqual(out.text(), "    a\n\n    b\n")

    def test_a_failing_body_leaves_no_closer_and_restores_depth(self) -> None:
        out = Writer()
        with self.assertRaises(KeyError), out.block("open {"):
            raise KeyError("boom")
        self.assertEqual(out.depth, 0)
        self.assertEqual(out.text(), "open {\n")

    def test_doc_counts_the_indentation_in_the_width(self) -> None:
        out = Writer()
        with out.indent(), out.indent():
            out.doc("one two three four five six seven eight", DocStyle.RUST, width=40)
        lines = out.text().splitlines()
        self.assertEqual(lines, ["        /// one two three four five six", "        /// seven eight"])
        self.assertTrue(all(len(line) <= 40 for line in lines))


class DocTests(unittest.TestCase):
    def test_first_paragraph_only(self) -> None:
        self.assertEqual(first_paragraph("  First line\nsecond line.\n\nNot this.\n"), ["First line", "second line."])
        self.assertEqual(first_paragraph(""), [])
        self.assertEqual(doc_comment("   \n ", DocStyle.RUST), [])

    def test_a_code_fence_is_not_cut_at_its_blank_line(self) -> None:
        doc = "Example:\n```json\n{\n\n}\n```\n\nNext paragraph."
        self.assertEqual(first_paragraph(doc), ["Example:", "```json", "{", "", "}", "```"])

    def test_without_width_the_own_line_breaks_are_kept(self) -> None:
        doc = "A short line\nand a second one,\ttabbed   \n  indented"
        self.assertEqual(doc_comment(doc, DocStyle.RUST), ["/// A short line", "/// and a second one, tabbed", "///   indented"])

    def test_prose_is_reflowed_to_the_width(self) -> None:
        doc = "The quick brown fox\njumps over the lazy dog and keeps on running far away."
        lines = doc_comment(doc, DocStyle.RUST, width=30)
        self.assertEqual(lines, ["/// The quick brown fox jumps", "/// over the lazy dog and", "/// keeps on running far away."])
        self.assertTrue(all(len(line) <= 30 for line in lines))

    def test_words_are_never_split(self) -> None:
        url = "https://example.com/" + "x" * 60
        self.assertEqual(reflow([f"See {url} for more."], 20), ["See", url, "for more."])

    def test_markdown_structure_is_kept_line_for_line(self) -> None:
        lines = [
            "Intro text that is long enough to wrap at a narrow width.",
            "- a list item that is much longer than the width and stays whole",
            "  continued under its item",
            "2. a numbered item",
            "| a | table | row that is long |",
            "```rust",
            "let x = some_function_call(with, many, arguments);",
            "```",
            "# Heading",
            "> a quote",
            "Setext title",
            "====",
            "Trailing prose that wraps too.",
        ]
        out = reflow(lines, 24)
        self.assertEqual(out[:3], ["Intro text that is long", "enough to wrap at a", "narrow width."])
        self.assertEqual(out[3:13], lines[1:11])
        self.assertEqual(out[13:], ["====", "Trailing prose that", "wraps too."])

    def test_a_wrapped_line_never_starts_a_list_or_heading(self) -> None:
        out = reflow(["aaaa - bbbb 1. cccc # dddd > eeee | ffff"], 5)
        self.assertEqual(out, ["aaaa -", "bbbb 1.", "cccc #", "dddd >", "eeee |", "ffff"])
        for line in out:
            self.assertNotRegex(line, r"^([-+*#]|\d+\.)\s")

    def test_a_hard_break_ends_the_run(self) -> None:
        self.assertEqual(reflow(["first\\", "second", "third"], 80), ["first\\", "second third"])

    def test_comment_markers(self) -> None:
        self.assertEqual(doc_comment("Module.", DocStyle.RUST_INNER), ["//! Module."])
        self.assertEqual(doc_comment("A\n\nB", DocStyle.HASH), ["# A"])
        self.assertEqual(doc_comment("one\n\n", DocStyle.RUST), ["/// one"])
        self.assertEqual(doc_comment("a\n \nb", DocStyle.RUST), ["/// a", "///", "/// b"])

    def test_jsdoc(self) -> None:
        self.assertEqual(doc_comment("Short.", DocStyle.JSDOC), ["/** Short. */"])
        self.assertEqual(doc_comment("a */ b\n\nc", DocStyle.JSDOC), ["/** a *\\/ b */"])
        self.assertEqual(doc_comment("one\n\ntwo", DocStyle.JSDOC), ["/** one */"])
        self.assertEqual(doc_comment("line one\nline two", DocStyle.JSDOC), ["/**", " * line one", " * line two", " */"])
        wrapped = doc_comment("alpha beta gamma delta epsilon", DocStyle.JSDOC, width=26)
        self.assertEqual(wrapped, ["/**", " * alpha beta gamma delta", " * epsilon", " */"])

    def test_docstrings_are_valid_python_holding_the_text(self) -> None:
        cases = [
            "Short.",
            'Ends with a "quote"',
            'Three """ quotes and four """"',
            "A backslash \\d and \\n",
            '"Starts with a quote',
            "Two lines\nof text.",
            'Two lines ending\nwith a quote"',
        ]
        for doc in cases:
            with self.subTest(doc=doc):
                text = "\n".join(doc_comment(doc, DocStyle.DOCSTRING))
                value = ast.literal_eval(text)
                # A multi-line docstring closes on its own line.
                self.assertEqual(value, doc if "\n" not in doc else doc + "\n")
        self.assertEqual(doc_comment("Short.", DocStyle.DOCSTRING), ['"""Short."""'])
        self.assertEqual(doc_comment("a\nb", DocStyle.DOCSTRING), ['"""a', "b", '"""'])
        # Too long for one line at this width: the closing quotes move down.
        self.assertEqual(doc_comment("abcdef", DocStyle.DOCSTRING, width=14, indent=4), ['"""abcdef', '"""'])


class LiteralTests(unittest.TestCase):
    def test_rust_escapes(self) -> None:
        self.assertEqual(rust_str('a"b\\c\nd\te\r'), '"a\\"b\\\\c\\nd\\te\\r"')
        self.assertEqual(rust_str("café"), '"café"')  # json.dumps would write \u00e9
        self.assertEqual(rust_str("\x07"), '"\\u{7}"')
        self.assertEqual(rust_str("\0"), '"\\0"')
        self.assertEqual(rust_str("\u200b\u2028"), '"\\u{200b}\\u{2028}"')
        self.assertEqual(rust_str("\U000e0001😀"), '"\\u{e0001}😀"')
        with self.assertRaises(ValueError):
            rust_str("\ud800")

    def test_rust_matches_json_dumps_on_printable_ascii(self) -> None:
        # The committed output was written with json.dumps; for what the specs hold
        # (printable ASCII) the two must agree, or the generated code would change.
        sample = "".join(chr(c) for c in range(0x20, 0x7F))
        self.assertEqual(rust_str(sample), json.dumps(sample))

    def test_rust_escapes_are_all_valid(self) -> None:
        for s in TRICKY:
            self.assertRegex(rust_str(s), r'^"([^"\\]|\\[nrt0\\"]|\\u\{[0-9a-f]{1,6}\})*"$')

    def test_python_round_trips(self) -> None:
        for s in [*TRICKY, "lone \ud800 surrogate"]:
            with self.subTest(s=s):
                lit = python_str(s)
                self.assertTrue(lit.startswith('"'))
                self.assertEqual(ast.literal_eval(lit), s)
        self.assertEqual(python_str("café\x01"), '"café\\x01"')
        self.assertEqual(python_str("\u2028"), '"\\u2028"')
        self.assertEqual(python_str("\U000e0001"), '"\\U000e0001"')

    def test_typescript_escapes(self) -> None:
        self.assertEqual(ts_str('a"b\\c\n'), '"a\\"b\\\\c\\n"')
        self.assertEqual(ts_str("\0" + "1"), '"\\x001"')  # never `\01`, an octal escape
        self.assertEqual(ts_str("\u2028\u2029"), '"\\u2028\\u2029"')
        self.assertEqual(ts_str("\U000e0001é"), '"\\u{e0001}é"')
        self.assertEqual(ts_str("\ud800"), '"\\ud800"')

    @unittest.skipUnless(shutil.which("node"), "node is not installed")
    def test_typescript_literals_read_back_in_node(self) -> None:
        cases = [*TRICKY, "lone \ud800 surrogate"]
        program = "console.log(JSON.stringify([" + ",".join(ts_str(s) for s in cases) + "]));"
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "lit.js"
            path.write_text(program, encoding="utf-8", errors="surrogatepass")
            proc = subprocess.run(["node", str(path)], capture_output=True, text=True, check=True)
        self.assertEqual(json.loads(proc.stdout), cases)

    @unittest.skipUnless(shutil.which("rustc"), "rustc is not installed")
    def test_rust_literals_compile_to_the_same_bytes(self) -> None:
        body = "".join(f"    for b in {rust_str(s)}.bytes() {{ print!(\"{{:02x}}\", b); }}\n    println!();\n" for s in TRICKY)
        with tempfile.TemporaryDirectory() as d:
            src, exe = Path(d) / "lit.rs", Path(d) / "lit"
            src.write_text(f"fn main() {{\n{body}}}\n", encoding="utf-8")
            subprocess.run(["rustc", "--edition", "2021", "-o", str(exe), str(src)], check=True, capture_output=True)
            proc = subprocess.run([str(exe)], capture_output=True, text=True, check=True)
        self.assertEqual(proc.stdout.split("\n")[: len(TRICKY)], [s.encode().hex() for s in TRICKY])


class NameTests(unittest.TestCase):
    def test_camel_keeps_its_behaviour(self) -> None:
        self.assertEqual(names.camel("user_message_chunk"), "UserMessageChunk")
        self.assertEqual(names.camel("$/cancel_request"), "CancelRequest")
        self.assertEqual(names.camel("date-time"), "DateTime")
        self.assertEqual(names.camel("fooBar"), "FooBar")
        self.assertEqual(names.camel("TASK_STATE"), "TASKSTATE")
        self.assertEqual(names.camel("2fa"), "V2fa")
        self.assertEqual(names.camel(""), "V")

    def test_snake(self) -> None:
        for given, want in [
            ("sessionId", "session_id"),
            ("HTTPAuthSecurityScheme", "http_auth_security_scheme"),
            ("date-time", "date_time"),
            ("$/cancel_request", "cancel_request"),
            ("_meta", "meta"),
            ("utf8String", "utf8_string"),
            ("TASK_STATE_WORKING", "task_state_working"),
            ("already_snake", "already_snake"),
        ]:
            self.assertEqual(names.snake(given), want, given)

    def test_camel_spellings(self) -> None:
        for given, lower, upper in [
            ("session_id", "sessionId", "SessionId"),
            ("SessionId", "sessionId", "SessionId"),
            ("TASK_STATE_WORKING", "taskStateWorking", "TaskStateWorking"),
            ("HTTPAuth", "httpAuth", "HttpAuth"),
            ("session/request_permission", "sessionRequestPermission", "SessionRequestPermission"),
            ("x", "x", "X"),
        ]:
            self.assertEqual(names.lower_camel(given), lower, given)
            self.assertEqual(names.upper_camel(given), upper, given)

    def test_rust_identifiers(self) -> None:
        self.assertEqual(names.rust_ident("type"), "r#type")
        self.assertEqual(names.rust_ident("mut"), "r#mut")
        self.assertEqual(names.rust_ident("gen"), "r#gen")
        self.assertEqual(names.rust_ident("self"), "self_")  # `r#self` is not allowed
        self.assertEqual(names.rust_ident("crate"), "crate_")
        self.assertEqual(names.rust_ident("union"), "union")  # a weak keyword
        self.assertEqual(names.rust_ident("2fa"), "_2fa")
        self.assertEqual(names.rust_ident("session_id"), "session_id")
        with self.assertRaises(ValueError):
            names.rust_ident("")

    def test_python_identifiers(self) -> None:
        self.assertEqual(names.python_ident("type"), "type_")  # a soft keyword since 3.12
        self.assertEqual(names.python_ident("match"), "match_")
        self.assertEqual(names.python_ident("from"), "from_")
        self.assertEqual(names.python_ident("None"), "None_")
        self.assertEqual(names.python_ident("async"), "async_")
        self.assertEqual(names.python_ident("id"), "id")
        self.assertEqual(names.python_ident("2fa"), "_2fa")

    def test_typescript_identifiers_and_properties(self) -> None:
        self.assertEqual(names.ts_ident("default"), "default_")
        self.assertEqual(names.ts_ident("class"), "class_")
        self.assertEqual(names.ts_ident("string"), "string_")  # a predefined type name
        self.assertEqual(names.ts_ident("await"), "await_")
        self.assertEqual(names.ts_ident("type"), "type")  # contextual: a legal name
        self.assertEqual(names.ts_ident("2fa"), "_2fa")
        self.assertEqual(names.ts_property("default"), "default")  # any word is a legal key
        self.assertEqual(names.ts_property("_meta"), "_meta")
        self.assertEqual(names.ts_property("$ref"), "$ref")
        self.assertEqual(names.ts_property("$/cancel_request"), '"$/cancel_request"')
        self.assertEqual(names.ts_property("content-type"), '"content-type"')


if __name__ == "__main__":
    unittest.main()
