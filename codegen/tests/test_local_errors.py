"""The local-error table: read from the rules file, checked, and emitted alike."""

from __future__ import annotations

import tomllib
import unittest
from pathlib import Path

from agentproto_codegen import local_errors

ROOT = Path(__file__).resolve().parents[2]
RULES = tomllib.loads((ROOT / "rules/acp.toml").read_text())
SOURCE = ("rules/acp.toml", "ab" * 32)


class LocalErrorTests(unittest.TestCase):
    def test_the_rules_file_reads(self) -> None:
        kinds, _ = local_errors.read(RULES, SOURCE)
        by_variant = {k.variant: k for k in kinds}
        self.assertEqual(by_variant["Rpc"].cls, "PeerError")
        self.assertEqual(by_variant["Cancelled"].handler_code, -32800)
        self.assertIsNone(by_variant["UnsupportedVersion"].method)

    def test_a_message_may_only_name_fields_and_error_object_parts(self) -> None:
        row = {"variant": "X", "doc": "x", "fields": [{"name": "method", "type": "string"}], "message": "{nope}"}
        with self.assertRaises(local_errors.LocalErrorsError):
            local_errors.read({"local_errors": [row]}, SOURCE)
        row["message"] = "{method.code}"
        with self.assertRaises(local_errors.LocalErrorsError):
            local_errors.read({"local_errors": [row]}, SOURCE)

    def test_each_language_renders_the_template(self) -> None:
        kinds, source = local_errors.read(RULES, SOURCE)
        rust = local_errors.rust(kinds, source)
        self.assertIn('#[error("`{method}` failed: {} ({})", .error.message, .error.code)]', rust)
        ts = local_errors.typescript(kinds, source)
        self.assertIn("super(method, `\\`${method}\\` failed: ${error.message} (${error.code})`);", ts)
        self.assertIn("super(null, `the agent answered protocol version ${answered}", ts)
        py = local_errors.python(kinds, source)
        self.assertIn('super().__init__(method, f"`{method}` failed: {error.message} ({error.code})")', py)
        self.assertIn("    handler_code = -32800", py)
        for line in py.splitlines():
            self.assertLessEqual(len(line), 120, line)


if __name__ == "__main__":
    unittest.main()
