"""The error-code table: read from the pinned schemas, named, and emitted alike."""

from __future__ import annotations

import unittest
from pathlib import Path

from agentproto_codegen import error_codes

ROOT = Path(__file__).resolve().parents[2]


class ErrorCodeTableTests(unittest.TestCase):
    table: error_codes.Table

    @classmethod
    def setUpClass(cls) -> None:
        cls.table = error_codes.read(ROOT, {"error_codes": {"constants": {"-32000": "AUTH_REQUIRED"}}})

    def test_every_version_contributes_in_order_of_first_appearance(self) -> None:
        values = [c.value for c in self.table.codes]
        self.assertEqual(values[:6], [-32700, -32600, -32601, -32602, -32603, -32800])
        by_value = {c.value: c for c in self.table.codes}
        self.assertEqual(by_value[-32022].first, "v2")
        self.assertEqual(by_value[-32022].constant, "UNSUPPORTED_PROTOCOL_VERSION")
        self.assertEqual(by_value[-32000].constant, "AUTH_REQUIRED", "the rules file names it")
        self.assertEqual(by_value[-32602].name, "invalid params")

    def test_the_explanation_is_the_first_sentence_without_the_title(self) -> None:
        text = "**Parse error**: Invalid JSON was received.\nAn error occurred while parsing."
        self.assertEqual(error_codes.explanation(text, "Parse error"), "Invalid JSON was received.")

    def test_a_constant_for_an_unknown_code_is_refused(self) -> None:
        with self.assertRaises(ValueError):
            error_codes.read(ROOT, {"error_codes": {"constants": {"-1": "NOPE"}}})

    def test_every_language_names_every_code(self) -> None:
        for text in (error_codes.rust(self.table), error_codes.python(self.table), error_codes.typescript(self.table)):
            for c in self.table.codes:
                self.assertIn(c.constant, text)
                self.assertIn(f'"{c.name}"', text)


if __name__ == "__main__":
    unittest.main()
