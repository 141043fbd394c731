"""The one model: per-declaration stability, the rules files, and the golden dumps."""

from __future__ import annotations

import copy
import json
import re
import unittest
from dataclasses import asdict
from pathlib import Path
from typing import Any

from agentproto_codegen import __main__ as cli
from agentproto_codegen import acp, rules
from agentproto_codegen.model import MODEL_FORMAT, Enum, Spec, Struct, Union

ROOT = Path(__file__).resolve().parents[2]


def without(o: Any, keys: set[str]) -> Any:
    if isinstance(o, dict):
        return {k: without(v, keys) for k, v in o.items() if k not in keys}
    if isinstance(o, list):
        return [without(v, keys) for v in o]
    return o


class ModelTests(unittest.TestCase):
    models: dict[str, Spec]
    hashes: dict[str, str]

    @classmethod
    def setUpClass(cls) -> None:
        cls.hashes = cli.verify_pins()
        cls.models = cli.build_models(cls.hashes)

    def method(self, model: str, wire: str, kind: str = "request"):  # type: ignore[no-untyped-def]
        return next(m for m in self.models[model].methods if m.wire == wire and m.kind == kind)

    # -- golden dumps ---------------------------------------------------------

    def test_the_dumps_equal_the_committed_golden_files(self) -> None:
        for name, model in self.models.items():
            golden = (ROOT / cli.MODEL_DIR / f"{name}.json").read_text(encoding="utf-8")
            self.assertEqual(model.to_json(), golden, f"{cli.MODEL_DIR}/{name}.json is stale: run `make codegen`")

    def test_the_dump_names_its_format_and_sources(self) -> None:
        dump = json.loads(self.models["acp-v1"].to_json())
        self.assertEqual(list(dump)[:2], ["format", "format_version"])
        self.assertEqual((dump["format"], dump["format_version"]), ("agentproto-model", MODEL_FORMAT))
        files = [s["file"] for s in dump["sources"]]
        self.assertEqual(files, ["spec/acp/v1/schema.json", "spec/acp/v1/schema.unstable.json", "rules/acp.toml"])
        a2a = json.loads(self.models["a2a-v1"].to_json())
        self.assertEqual([s["file"] for s in a2a["sources"]], ["spec/a2a/v1.0/a2a.proto", "rules/a2a.toml"])
        send = next(m for m in a2a["methods"] if m["wire"] == "SendStreamingMessage")
        self.assertEqual((send["side"], send["streaming"], send["http"][0]["path"]), ("server", True, "/message:stream"))

    # -- stability ------------------------------------------------------------

    def test_stability_is_per_declaration_field_variant_value_and_method(self) -> None:
        v1 = self.models["acp-v1"]
        self.assertEqual(self.method("acp-v1", "session/prompt").stability, "stable")
        self.assertEqual(self.method("acp-v1", "session/fork").stability, "unstable")
        self.assertEqual(v1.decls["ForkSessionRequest"].stability, "unstable")
        caps = v1.decls["AgentCapabilities"]
        assert isinstance(caps, Struct)
        self.assertEqual({f.wire: f.stability for f in caps.fields}["providers"], "unstable")
        self.assertEqual({f.wire: f.stability for f in caps.fields}["loadSession"], "stable")
        update = v1.decls["SessionUpdate"]
        assert isinstance(update, Union)
        marks = {v.name: v.stability for v in update.variants}
        self.assertEqual((marks["AgentMessageChunk"], marks["CursorUpdate"]), ("stable", "unstable"))
        v2 = self.models["acp-v2"]
        self.assertEqual(self.method("acp-v2", "session/prompt").stability, "draft")
        self.assertEqual(self.method("acp-v2", "session/fork").stability, "unstable")
        self.assertEqual(v2.decls["PromptRequest"].stability, "draft")
        self.assertEqual(self.models["a2a-v1"].decls["Task"].stability, "stable")

    def test_enum_values_carry_stability(self) -> None:
        for model in self.models.values():
            for d in model.decls.values():
                if isinstance(d, Enum) and d.value_stability:
                    self.assertEqual(len(d.value_stability), len(d.values), d.name)

    def test_each_stable_surface_is_cut_exactly_out_of_the_one_model(self) -> None:
        for version, keep in (("v1", {"stable"}), ("v2", {"draft"})):
            schema, meta = f"acp/{version}/schema.json", f"acp/{version}/meta.json"
            alone = acp.read_spec(str(ROOT / "spec" / schema), str(ROOT / "spec" / meta), self.hashes[schema], version, "stable", None)
            cut = self.models[f"acp-{version}"].narrow(keep, "stable", alone.source_file, alone.source_sha256)
            self.assertEqual(list(cut.decls), list(alone.decls), version)
            # The stable reading knows no rules and labels everything stable.
            noise = {"stability", "value_stability", "on_unknown", "unknown_to_default", "handler", "required", "null_result", "gate", "values", "session", "session_gate"}
            a, b = without(asdict(cut), noise), without(asdict(alone), noise)
            for key in ("sources", "rules"):
                a.pop(key), b.pop(key)
            self.assertEqual(a, b, version)

    # -- rules ----------------------------------------------------------------

    def test_gates_are_paths_from_each_versions_initialize_message(self) -> None:
        v1 = self.method("acp-v1", "session/delete").gate
        v2 = self.method("acp-v2", "session/delete").gate
        assert v1 is not None and v2 is not None
        self.assertEqual((v1.where, v1.path), ("initialize.result", ["agentCapabilities", "sessionCapabilities", "delete"]))
        self.assertEqual((v2.where, v2.path), ("initialize.result", ["capabilities", "session", "delete"]))
        fs = self.method("acp-v1", "fs/read_text_file").gate
        assert fs is not None
        self.assertEqual((fs.where, fs.path, fs.refusal), ("initialize.params", ["clientCapabilities", "fs", "readTextFile"], -32601))
        elicit = self.method("acp-v2", "elicitation/create").gate
        assert elicit is not None
        self.assertEqual((elicit.path, elicit.refusal), (["capabilities", "elicitation", "{mode}"], -32602))
        login = self.method("acp-v2", "auth/login").gate
        assert login is not None
        self.assertEqual((login.path, login.test), (["authMethods"], "non-empty"))
        self.assertIsNone(self.method("acp-v1", "session/prompt").gate, "a v1 prompt needs no capability")
        for name in ("acp-v1", "acp-v2"):
            roots = self.models[name].rules["capabilities"]
            for m in self.models[name].methods:
                if m.gate and m.gate.test == "advertised":
                    self.assertEqual(m.gate.path[0], roots[m.side], f"{name} {m.wire}")

    def test_the_null_id_rule_comes_from_each_schemas_request_id(self) -> None:
        self.assertTrue(self.models["acp-v1"].rules["envelope"]["null_request_id"])
        self.assertFalse(self.models["acp-v2"].rules["envelope"]["null_request_id"], "v2: an id MUST NOT be null")

    def test_sessions_required_handlers_names_and_null_results(self) -> None:
        load = self.method("acp-v1", "session/load")
        assert load.session is not None
        self.assertEqual((load.session.effect, load.session.unseen_ok, load.null_result), ("opened", True, True))
        new = self.method("acp-v2", "session/new")
        assert new.session is not None
        self.assertEqual((new.session.effect, new.session.unseen_ok, new.required, new.null_result), ("created", False, True, False))
        self.assertEqual(self.method("acp-v1", "session/update", "notification").handler, "session_update")
        self.assertEqual(self.method("acp-v1", "session/new").handler, "new_session")
        self.assertFalse(any(m.wire == "session/load" for m in self.models["acp-v2"].methods))

    def test_session_gates_list_the_requests_whose_answers_announce_the_member(self) -> None:
        set_mode = self.method("acp-v1", "session/set_mode").session_gate
        assert set_mode is not None
        self.assertEqual(set_mode.member, "modes")
        self.assertEqual(set_mode.opened_by, ["session/new", "session/load", "session/resume", "session/fork"])
        self.assertIn("#/$defs/ClientRequest/properties/params/anyOf/0/anyOf/18", set_mode.section)
        # The stable surface has no `session/fork`: its gate lists only the requests it has.
        schema = "acp/v1/schema.json"
        stable = self.models["acp-v1"].narrow({"stable"}, "stable", schema, self.hashes[schema])
        cut = next(m for m in stable.methods if m.wire == "session/set_mode").session_gate
        assert cut is not None
        self.assertEqual(cut.opened_by, ["session/new", "session/load", "session/resume"])
        self.assertFalse(any(m.session_gate for m in self.models["acp-v2"].methods), "v2 has no modes")
        gated = [m.wire for m in self.models["acp-v1"].methods if m.session_gate]
        self.assertEqual(gated, ["session/set_mode"])

    def test_a_session_gate_that_drifts_from_the_schema_fails(self) -> None:
        good, _ = rules.load(ROOT / "rules/acp.toml")
        schema = json.loads((ROOT / "spec/acp/v1/schema.unstable.json").read_text())
        openers = ["session/new", "session/load", "session/resume", "session/fork"]
        source = {"docs": "x"}
        # Each broken rule, and a piece of the error that must name what is wrong.
        broken = [
            ("session/set_mode", {"member": "nope", "opened_by": openers, **source}, "has no `nope`"),
            ("session/set_mode", {"member": "modes", "opened_by": [*openers, "session/prompt"], **source}, "neither creates nor opens"),
            ("session/set_mode", {"member": "modes", "opened_by": openers[:3], **source}, "['session/fork'] also open sessions"),
            ("session/set_mode", {"member": "modes", "opened_by": [*openers, "session/new"], **source}, "lists a request twice"),
            ("session/set_mode", {"member": "modes", "opened_by": [], **source}, "non-empty `opened_by`"),
            ("session/list", {"member": "modes", "opened_by": openers, **source}, "not session-scoped"),
            ("session/load", {"member": "modes", "opened_by": openers, **source}, "changes sessions itself"),
            ("fs/read_text_file", {"member": "modes", "opened_by": openers, **source}, "is handled by agent"),
            ("session/set_mode", {"member": "sessionId", "opened_by": ["session/new", "session/fork"], **source}, "could never shut"),
            ("session/set_mode", {"member": "configOptions", "opened_by": openers, **source}, "is not an object"),
            ("session/set_mode", {"member": "modes", "opened_by": openers, "source": "/$defs/ClientRequest/anyOf/99"}, "not in the pinned schema"),
            ("session/set_mode", {"member": "modes", "opened_by": openers}, "needs a `source` or `docs`"),
            ("session/nope", {"member": "modes", "opened_by": openers, **source}, "is not a request of ACP v1"),
        ]
        for method, rule, why in broken:
            bad = copy.deepcopy(good)
            bad["v1"]["session_gates"] = {method: rule}
            model = acp.read_version(str(ROOT / "spec"), "v1", self.hashes)
            with self.assertRaisesRegex(rules.RulesError, re.escape(why), msg=f"{method} {rule}"):
                rules.AcpRules(model, bad, schema).apply()
        # The same reader accepts the rule as written.
        model = acp.read_version(str(ROOT / "spec"), "v1", self.hashes)
        rules.AcpRules(model, copy.deepcopy(good), schema).apply()

    def test_union_policies_come_from_the_rules_file(self) -> None:
        v1 = self.models["acp-v1"].decls
        for name, policy in (("SessionUpdate", "keep-warn"), ("CreateElicitationRequestVariant", "keep")):
            u = v1[name]
            assert isinstance(u, Union)
            self.assertEqual(u.on_unknown, policy, name)
        variant = v1["SetSessionConfigOptionRequestVariant"]
        assert isinstance(variant, Union)
        self.assertTrue(variant.unknown_to_default)

    def test_a_rules_file_that_drifts_from_the_schema_fails(self) -> None:
        good, _ = rules.load(ROOT / "rules/acp.toml")
        schema = json.loads((ROOT / "spec/acp/v2/schema.unstable.json").read_text())
        broken = [
            ("gates", "session/delete", {"requires": "agentCapabilities.session.delete", "source": "/$defs/SessionCapabilities"}),
            ("gates", "session/nope", {"requires": "capabilities.session", "source": "/$defs/SessionCapabilities"}),
            ("gates", "session/delete", {"requires": "capabilities.session.delete", "source": "/$defs/Nope"}),
            ("gates", "session/delete", {"requires": "capabilities.session.delete", "test": "non-empty", "docs": "x"}),
            ("sessions", "session/list", {"effect": "created", "docs": "x"}),
        ]
        for table, method, rule in broken:
            bad = copy.deepcopy(good)
            bad["v2"][table][method] = rule
            model = acp.read_version(str(ROOT / "spec"), "v2", self.hashes)
            with self.assertRaises(rules.RulesError, msg=f"{table} {method} {rule}"):
                rules.AcpRules(model, bad, schema).apply()


if __name__ == "__main__":
    unittest.main()
