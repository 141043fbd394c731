"""The A2A error table: rows from rules/a2a.toml, 0.3 codes from the pinned 0.3 schema."""

from __future__ import annotations

import unittest
from pathlib import Path

from agentproto_codegen import a2a_errors

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = (ROOT / a2a_errors.SCHEMA_V03).read_bytes()

ROW = """
[[errors.rows]]
kind = "{kind}"
doc = "d"
code = {code}
http = 404
grpc = "NOT_FOUND"
reason = "{reason}"
message = "m"
origin = "spec"
{extra}
"""


def rules(*rows: str) -> bytes:
    internal = ROW.format(kind="Internal", code=-32603, reason="INTERNAL_ERROR", extra="")
    return ("format = 1\n[errors]\n" + internal + "".join(rows)).encode()


class A2aErrorTableTests(unittest.TestCase):
    def test_the_pinned_rules_read_whole(self) -> None:
        table = a2a_errors.read(ROOT)
        by_kind = {r.kind: r for r in table.rows}
        self.assertEqual(by_kind["TaskNotCancelable"].http, (400, 409), "1.0.1, then 1.0.0")
        self.assertEqual(by_kind["PushNotificationNotSupported"].grpc, ("FAILED_PRECONDITION", "UNIMPLEMENTED"))
        self.assertEqual(by_kind["TaskNotFound"].grpc, ("NOT_FOUND", "NOT_FOUND"), "1.0.0 defaults to 1.0.1")
        self.assertEqual(by_kind["ExtendedAgentCardNotConfigured"].code_v03, -32007, "from the 0.3 schema")
        self.assertEqual(by_kind["VersionNotSupported"].code_v03, -32600, "0.3 had no such error")
        self.assertEqual(by_kind["Unauthenticated"].code_v03, by_kind["Unauthenticated"].code)

    def test_a_0_3_definition_that_does_not_exist_is_refused(self) -> None:
        bad = ROW.format(kind="Gone", code=-32001, reason="GONE", extra='v03 = "NoSuchError"')
        with self.assertRaisesRegex(ValueError, "NoSuchError"):
            a2a_errors.parse(rules(bad), SCHEMA)

    def test_a_status_guessed_for_two_kinds_is_refused(self) -> None:
        one = ROW.format(kind="A", code=-1, reason="A", extra="guess = [404]")
        two = ROW.format(kind="B", code=-2, reason="B", extra="guess = [404]")
        with self.assertRaisesRegex(ValueError, "already names A"):
            a2a_errors.parse(rules(one, two), SCHEMA)

    def test_unknown_fields_and_grpc_names_are_refused(self) -> None:
        with self.assertRaisesRegex(ValueError, "unknown fields"):
            a2a_errors.parse(rules(ROW.format(kind="A", code=-1, reason="A", extra="colour = 1")), SCHEMA)
        bad_grpc = ROW.format(kind="A", code=-1, reason="A", extra='grpc_1_0_0 = "NOPE"')
        with self.assertRaisesRegex(ValueError, "gRPC status"):
            a2a_errors.parse(rules(bad_grpc), SCHEMA)

    def test_rust_names_every_kind_in_row_order(self) -> None:
        table = a2a_errors.read(ROOT)
        text = a2a_errors.rust(table)
        positions = [text.index(f"Row {{ kind: ErrorKind::{r.kind},") for r in table.rows]
        self.assertEqual(positions, sorted(positions))
        self.assertIn("409 => Some(ErrorKind::TaskNotCancelable)", text)


if __name__ == "__main__":
    unittest.main()
