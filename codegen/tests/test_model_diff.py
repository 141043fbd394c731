"""The change report of `make spec-refresh` (model_diff.py) on small hand-made models."""

from __future__ import annotations

import copy
import unittest
from typing import Any

from agentproto_codegen.model_diff import report


def model() -> dict[str, Any]:
    field = {"wire": "title", "type": {"prim": "string", "kind": "prim"}, "required": False, "stability": "unstable"}
    return {
        "methods": [{"wire": "session/new", "kind": "request", "side": "agent", "params": "New", "result": "R", "stability": "stable"}],
        "decls": {
            "New": {"decl": "struct", "name": "New", "fields": [field], "stability": "stable"},
            "Kind": {"decl": "enum", "name": "Kind", "values": ["a", "b"], "stability": "stable"},
            "Update": {"decl": "union", "name": "Update", "variants": [{"name": "A", "stability": "stable"}], "stability": "stable"},
            "Gone": {"decl": "alias", "name": "Gone", "target": {"kind": "json"}, "stability": "unstable"},
        },
    }


class ModelDiffTest(unittest.TestCase):
    def test_no_change(self) -> None:
        self.assertEqual(report({"acp-v1.json": model()}, {"acp-v1.json": model()}), "## acp-v1.json: no change")

    def test_every_kind_of_change_is_named(self) -> None:
        new = copy.deepcopy(model())
        new["methods"].append({**new["methods"][0], "wire": "session/options", "stability": "unstable"})
        new["methods"][0]["result"] = "R2"
        new["decls"]["New"]["fields"][0]["stability"] = "stable"
        new["decls"]["New"]["fields"].append({"wire": "cwd", "type": {"prim": "string", "kind": "prim"}, "required": True, "stability": "stable"})
        new["decls"]["Kind"]["values"] = ["a", "c"]
        new["decls"]["Update"]["variants"].append({"name": "B", "stability": "unstable"})
        del new["decls"]["Gone"]
        text = report({"acp-v1.json": model()}, {"acp-v1.json": new})
        for line in [
            "method `session/options` added (unstable)",
            "method `session/new`: result 'R' → 'R2'",
            "type `New`: field `title`: unstable → stable",
            "type `New`: field `cwd` added (required, stable)",
            "type `Kind`: value `c` added",
            "type `Kind`: value `b` removed",
            "type `Update`: variant `B` added (unstable)",
            "type `Gone` removed (was unstable)",
        ]:
            self.assertIn(f"- {line}", text)
        # Same input, same report: the lines are in one order.
        self.assertEqual(text, report({"acp-v1.json": model()}, {"acp-v1.json": copy.deepcopy(new)}))


if __name__ == "__main__":
    unittest.main()
