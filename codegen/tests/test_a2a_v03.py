"""The A2A 0.3 <-> 1.0 tables: derived from the pinned 0.3 schema, the 1.0 model and
rules/a2a.toml [v03]; whatever the three disagree on is refused."""

from __future__ import annotations

import json
import unittest
from pathlib import Path
from typing import Any

from agentproto_codegen import a2a_v03, rust_a2a_v03
from agentproto_codegen.a2a_v03 import Rule

ROOT = Path(__file__).resolve().parents[2]
RULES = (ROOT / a2a_v03.RULES).read_text()
SCHEMA = (ROOT / a2a_v03.SCHEMA_V03).read_bytes()
MODEL = json.loads((ROOT / a2a_v03.MODEL_V1).read_bytes())


def parse(rules: str = RULES, schema: dict[str, Any] | None = None) -> a2a_v03.Tables:
    raw = SCHEMA if schema is None else json.dumps(schema).encode()
    return a2a_v03.parse(rules.encode(), raw, MODEL)


def edited(old: str, new: str) -> str:
    """The pinned rules with one piece of the [v03] section replaced."""
    start = RULES.index("[v03]")
    section = RULES[start:]
    if old not in section:
        raise AssertionError(f"{old!r} is not in the [v03] section")
    return RULES[:start] + section.replace(old, new, 1)


class DerivedShapes(unittest.TestCase):
    def test_members_of_the_same_name_are_matched_in_the_1_0_order(self) -> None:
        message = parse().shapes["Message"]
        self.assertEqual(message.kind, "object")
        self.assertEqual(
            message.rules,
            [
                Rule("Const", ("kind", "message")),
                Rule("CopyRequired", ("messageId",)),
                Rule("Copy", ("contextId",)),
                Rule("Copy", ("taskId",)),
                Rule("Enum", ("role", "role"), enum="Role"),
                Rule("List", ("parts", "parts"), shape="Part"),
                Rule("Copy", ("metadata",)),
                Rule("Copy", ("extensions",)),
                Rule("Copy", ("referenceTaskIds",)),
            ],
        )

    def test_nested_shapes_renames_negations_and_flattening(self) -> None:
        shapes = parse().shapes
        config = {r.names[0]: r for r in shapes["MessageSendConfiguration"].rules}
        self.assertEqual(config["blocking"], Rule("Not", ("blocking", "returnImmediately")))
        self.assertEqual(
            config["pushNotificationConfig"],
            Rule("Field", ("pushNotificationConfig", "taskPushNotificationConfig"), shape="PushNotificationConfig"),
        )
        task_push = shapes["TaskPushNotificationConfig"].rules
        self.assertIn(Rule("Flatten", ("pushNotificationConfig",), shape="PushNotificationConfig"), task_push)
        self.assertEqual(shapes["GetPushParams"].rules[-1], Rule("Members", fn="default_get_id"), "functions last")
        self.assertIn(Rule("Rename", ("pushNotificationConfigId", "id")), shapes["GetPushParams"].rules)
        scheme = shapes["APIKeySecurityScheme"].rules
        self.assertEqual(scheme[0], Rule("Const", ("type", "apiKey")), "a const discriminator other than kind")

    def test_unions_wrapped_lists_and_empty_results(self) -> None:
        shapes = parse().shapes
        stream = shapes["StreamEvent"]
        self.assertEqual(stream.tag, "kind")
        self.assertEqual(
            [(v.v1_member, v.tag, v.shape) for v in stream.variants],
            [
                ("task", "task", "Task"),
                ("message", "message", "Message"),
                ("statusUpdate", "status-update", "TaskStatusUpdateEvent"),
                ("artifactUpdate", "artifact-update", "TaskArtifactUpdateEvent"),
            ],
        )
        self.assertEqual(shapes["SecurityScheme"].tag, "type")
        listed = shapes["ListPushResult"]
        self.assertEqual(
            (listed.kind, listed.wrapped, listed.item), ("wrapped", "configs", "TaskPushNotificationConfig")
        )
        self.assertEqual(shapes["DeletePushResult"].kind, "empty")
        self.assertEqual(shapes["NoParams"].kind, "no_params")

    def test_members_0_3_requires_are_written_when_1_0_leaves_them_out(self) -> None:
        task = parse().shapes["Task"].rules
        self.assertIn(Rule("CopyRequired", ("contextId",)), task)
        self.assertIn(Rule("Copy", ("metadata",)), task)

    def test_the_method_table(self) -> None:
        methods = {m.name: m for m in parse().methods}
        self.assertEqual(len(methods), 10)
        self.assertEqual(
            methods["message/send"],
            a2a_v03.Method("message/send", "SendMessage", "MessageSendParams", "SendMessageResult"),
        )
        self.assertEqual(methods["tasks/resubscribe"].result, "StreamEvent")


class DerivedEnums(unittest.TestCase):
    def test_kebab_values_meet_the_proto_enum_by_its_prefix_with_proto_numbers(self) -> None:
        states = parse().enums["TaskState"].rows
        self.assertIn(("input-required", "TASK_STATE_INPUT_REQUIRED", 6), states)
        self.assertEqual([r[2] for r in states[:-1]], list(range(1, 9)), "in the proto's order")
        self.assertEqual(states[-1], ("unknown", "TASK_STATE_UNSPECIFIED", 0), "the rules' extra row, last")
        self.assertEqual(parse().enums["Role"].rows, [("user", "ROLE_USER", 1), ("agent", "ROLE_AGENT", 2)])

    def test_numbers_come_from_the_model_when_it_keeps_them(self) -> None:
        model = json.loads(json.dumps(MODEL))
        model["decls"]["Role"]["numbers"] = [1, 7]
        tables = a2a_v03.parse(RULES.encode(), SCHEMA, model)
        self.assertEqual(tables.enums["Role"].rows, [("user", "ROLE_USER", 1), ("agent", "ROLE_AGENT", 7)])

    def test_a_0_3_value_without_a_1_0_value_is_refused(self) -> None:
        with self.assertRaisesRegex(ValueError, "'unknown' has no 1.0 value TASK_STATE_UNKNOWN"):
            parse(edited('extra = { unknown = "TASK_STATE_UNSPECIFIED" }', ""))

    def test_an_extra_row_naming_a_value_that_does_not_exist_is_refused(self) -> None:
        with self.assertRaisesRegex(ValueError, "'TASK_STATE_GONE', which is not a value"):
            parse(edited('extra = { unknown = "TASK_STATE_UNSPECIFIED" }', 'extra = { unknown = "TASK_STATE_GONE" }'))


class Refusals(unittest.TestCase):
    def test_a_rules_member_that_does_not_exist_is_refused(self) -> None:
        with self.assertRaisesRegex(
            ValueError, r"shapes.APIKeySecurityScheme: .*'where', which is not a member of 0.3"
        ):
            parse(edited('rename = { in = "location" }', 'rename = { where = "location" }'))
        with self.assertRaisesRegex(ValueError, r"'place', which is not a member of 1.0 APIKeySecurityScheme"):
            parse(edited('rename = { in = "location" }', 'rename = { in = "place" }'))
        with self.assertRaisesRegex(ValueError, r"v1_only names 'owner'"):
            parse(
                edited(
                    'v1 = "GetTaskRequest"\ndrop = ["metadata"]\nv1_only = ["tenant"]',
                    'v1 = "GetTaskRequest"\ndrop = ["metadata"]\nv1_only = ["tenant", "owner"]',
                )
            )

    def test_a_0_3_member_nothing_accounts_for_is_refused(self) -> None:
        schema = json.loads(SCHEMA)
        schema["definitions"]["Task"]["properties"]["colour"] = {"type": "string"}
        with self.assertRaisesRegex(ValueError, r"shapes.Task: 0.3 member 'colour' of Task is not in 1.0 Task"):
            parse(schema=schema)
        with self.assertRaisesRegex(ValueError, r"0.3 member 'metadata' of TaskQueryParams"):
            parse(edited('v1 = "GetTaskRequest"\ndrop = ["metadata"]', 'v1 = "GetTaskRequest"'))

    def test_a_1_0_member_nothing_accounts_for_is_refused(self) -> None:
        with self.assertRaisesRegex(ValueError, r"1.0 member 'tenant' of GetTaskRequest has no 0.3 member"):
            parse(
                edited(
                    'v1 = "GetTaskRequest"\ndrop = ["metadata"]\nv1_only = ["tenant"]',
                    'v1 = "GetTaskRequest"\ndrop = ["metadata"]',
                )
            )

    def test_a_method_whose_shapes_do_not_match_the_schemas_is_refused(self) -> None:
        with self.assertRaisesRegex(ValueError, r"methods\[2\] \(tasks/get\): params: 0.3 TaskQueryParams"):
            parse(
                edited(
                    'operation = "GetTask"\nparams = "TaskQueryParams"',
                    'operation = "GetTask"\nparams = "CancelParams"',
                )
            )
        with self.assertRaisesRegex(ValueError, "no 1.0 operation 'GetTasks'"):
            parse(edited('operation = "GetTask"\n', 'operation = "GetTasks"\n'))

    def test_rules_that_cannot_apply_are_refused(self) -> None:
        with self.assertRaisesRegex(ValueError, r"shapes.Part: a shape converted whole takes no member rules"):
            parse(edited('custom = "part"', 'custom = "part"\ndrop = ["metadata"]'))
        with self.assertRaisesRegex(ValueError, r"shapes.StreamEvent: member rules \['drop'\] on 0.3"):
            parse(edited('v1 = "StreamResponse"', 'v1 = "StreamResponse"\ndrop = ["kind"]'))
        with self.assertRaisesRegex(ValueError, r"0.3 members \['metadata'\] are named by more than one rule"):
            parse(
                edited(
                    'v1 = "CancelTaskRequest"',
                    'v1 = "CancelTaskRequest"\ndrop = ["metadata"]\nrename = { metadata = "id" }',
                )
            )

    def test_a_same_type_that_differs_is_refused(self) -> None:
        with self.assertRaisesRegex(ValueError, "same AgentSkill: 0.3 members"):
            parse(edited('same = ["AgentProvider",', 'same = ["AgentSkill", "AgentProvider",'))


class RustOutput(unittest.TestCase):
    def test_statics_name_their_shapes_and_functions(self) -> None:
        text = rust_a2a_v03.rust(parse())
        self.assertIn('Rule::Enum("role", "role", ROLE)', text)
        self.assertIn(
            'Rule::Field("security", "securityRequirements", &Shape::Value(ValueFn::SecurityRequirements))', text
        )
        self.assertIn("pub(crate) static STREAM_EVENT: Shape = Shape::Union {", text)
        self.assertIn("    FinalFlag,\n", text)
        self.assertIn(
            'Method { name: "tasks/pushNotificationConfig/list", operation: Operation::ListTaskPushNotificationConfigs, '
            "params: &LIST_PUSH_PARAMS, result: &LIST_PUSH_RESULT }",
            text,
        )
        self.assertTrue(text.startswith("// @generated by `make codegen` from rules/a2a.toml\n"))


if __name__ == "__main__":
    unittest.main()
