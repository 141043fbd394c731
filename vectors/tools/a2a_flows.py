"""A2A flows (vectors/a2a/v1/flows/): operations in sequence against a server running
the scripted executor, checked on both bindings. Vocabulary in vectors/README.md,
"A2A flows"."""

from __future__ import annotations

from a2a_lib import NOTES, requirement

FLOWS: dict[str, dict] = {}
P = {"$partial": True}
ANY = "$any"


def flow(name: str, req: str, description: str, steps: list) -> None:
    fid = f"a2a/v1/flows/{name}"
    assert fid not in FLOWS, fid
    FLOWS[fid] = {"id": fid, "requirement": req, "description": description, "protocol": "a2a/v1",
                  "executor": "scripted", "bindings": ["jsonrpc", "rest"], "steps": steps}


def msg(mid: str, text: str, **extra) -> dict:
    return {"messageId": mid, "role": "ROLE_USER", "parts": [{"text": text}], **extra}


def send(mid: str, text: str, expect: dict, configuration=None, **extra) -> dict:
    params = {"message": msg(mid, text, **extra)}
    if configuration:
        params["configuration"] = configuration
    return {"call": {"operation": "SendMessage", "params": params, "expect": expect}}


def call(op: str, params: dict, expect: dict) -> dict:
    return {"call": {"operation": op, "params": params, "expect": expect}}


def ok(result) -> dict:
    return {"result": result}


def err(reason: str) -> dict:
    return {"error": {"reason": reason, **P}}


def status(state: str) -> dict:
    return {"state": state, **P}


def task(tid: str, state, **members) -> dict:
    st = state if isinstance(state, dict) else status(state)
    return {"id": tid, "status": st, **members, **P}


def ev(result, id=None) -> dict:
    """An SSE event holding `result` (a StreamResponse); `id` binds or checks its SSE id."""
    e = {"result": result, **P}
    if id is not None:
        e["id"] = id
    return e


def status_update(tid: str, state: str) -> dict:
    return {"statusUpdate": {"taskId": tid, "contextId": ANY, "status": status(state), **P}}


def artifact_update(tid: str, artifact_id: str, text: str) -> dict:
    return {"artifactUpdate": {"taskId": tid, "contextId": ANY,
                               "artifact": {"artifactId": artifact_id, "parts": [{"text": text}]}, **P}}


ECHO_ART = [{"artifactId": "echo", "parts": [{"text": "hello"}]}]
ACTIVE = {"$one_of": [status("TASK_STATE_SUBMITTED"), status("TASK_STATE_WORKING")]}


def build_flows():
    r_life = requirement("a2a.v1.flow.lifecycle", NOTES + " sections 3.1.1-3.1.5 and 3.2.2 (blocking send, "
                         "GetTask, streams, CancelTask, terminal tasks)",
                         "A blocking send returns the task once terminal; GetTask returns it; a streamed task "
                         "starts with the Task, then its updates; historyLength 0 omits the history; CancelTask "
                         "cancels a running task, whose stream ends with the CANCELED update, and refuses a "
                         "terminal one, canceled ones included (TaskNotCancelable); a message to a terminal task is UnsupportedOperation "
                         "and an unknown task (named by GetTask, CancelTask or a message) is TaskNotFound; "
                         "GetExtendedAgentCard on an agent that does not declare the capability is "
                         "UnsupportedOperation.")
    flow("send-get-stream-cancel", r_life, "Send (echo) -> get (with and without history) -> cancel refused "
         "-> stream (wait) -> cancel, on one server.", [
        send("m-1", "echo hello", ok({"task": task("${t1}", "TASK_STATE_COMPLETED", contextId="${c1}",
                                                      artifacts=ECHO_ART)})),
        call("GetTask", {"id": "${t1}"}, ok(task("${t1}", "TASK_STATE_COMPLETED", contextId="${c1}",
                                                 artifacts=ECHO_ART))),
        call("GetTask", {"id": "${t1}", "historyLength": 0}, ok(task("${t1}", "TASK_STATE_COMPLETED",
                                                                     history="$absent"))),
        call("CancelTask", {"id": "${t1}"}, err("TASK_NOT_CANCELABLE")),
        {"open": {"stream": "s", "operation": "SendStreamingMessage", "params": {"message": msg("m-2", "wait")}}},
        {"events": {"stream": "s", "expect": [
            ev({"task": task("${t2}", "TASK_STATE_SUBMITTED")}),
            ev(status_update("${t2}", "TASK_STATE_WORKING")),
            ev(artifact_update("${t2}", "progress", "started")),
        ]}},
        call("CancelTask", {"id": "${t2}"}, ok(task("${t2}", "TASK_STATE_CANCELED"))),
        {"events": {"stream": "s", "expect": [ev(status_update("${t2}", "TASK_STATE_CANCELED"))]}},
        {"ended": {"stream": "s"}},
        call("GetTask", {"id": "${t2}"}, ok(task("${t2}", "TASK_STATE_CANCELED"))),
        call("CancelTask", {"id": "${t2}"}, err("TASK_NOT_CANCELABLE")),
        send("m-3", "echo again", err("UNSUPPORTED_OPERATION"), taskId="${t1}"),
        call("GetTask", {"id": "no-such-task"}, err("TASK_NOT_FOUND")),
        call("CancelTask", {"id": "no-such-task"}, err("TASK_NOT_FOUND")),
        send("m-4", "echo hello", err("TASK_NOT_FOUND"), taskId="no-such-task"),
        call("GetExtendedAgentCard", {}, err("UNSUPPORTED_OPERATION")),
    ])
    r_stream = requirement("a2a.v1.flow.stream-states", NOTES + " sections 3.1.2 and 11.7 (a task stream starts "
                           "with the Task and closes at a terminal or interrupted state)",
                           "A streamed task delivers the Task, then each status and artifact update in the order the "
                           "agent made them, and the stream ends after the COMPLETED or INPUT_REQUIRED update; on a "
                           "follow-up message the first Task shows the task as it was before the updates that follow "
                           "(never a later state).")
    flow("stream-states", r_stream, "An echo turn streamed to completion, then a turn streamed to INPUT_REQUIRED and "
         "continued by a second stream.", [
        {"open": {"stream": "s", "operation": "SendStreamingMessage", "params": {"message": msg("m-1", "echo hello")}}},
        {"events": {"stream": "s", "expect": [
            ev({"task": task("${t}", "TASK_STATE_SUBMITTED", contextId="${c}")}),
            ev(status_update("${t}", "TASK_STATE_WORKING")),
            ev(artifact_update("${t}", "echo", "hello")),
            ev(status_update("${t}", "TASK_STATE_COMPLETED")),
        ]}},
        {"ended": {"stream": "s"}},
        {"open": {"stream": "q", "operation": "SendStreamingMessage", "params": {"message": msg("m-2", "ask")}}},
        {"events": {"stream": "q", "expect": [
            ev({"task": task("${q}", "TASK_STATE_SUBMITTED")}),
            ev(status_update("${q}", "TASK_STATE_INPUT_REQUIRED")),
        ]}},
        {"ended": {"stream": "q"}},
        {"open": {"stream": "q2", "operation": "SendStreamingMessage",
                  "params": {"message": msg("m-3", "echo hello", taskId="${q}")}}},
        {"events": {"stream": "q2", "expect": [
            ev({"task": task("${q}", {"$one_of": [status("TASK_STATE_INPUT_REQUIRED"), status("TASK_STATE_SUBMITTED"),
                                                  status("TASK_STATE_WORKING")]})}),
            ev(status_update("${q}", "TASK_STATE_WORKING")),
            ev(artifact_update("${q}", "echo", "hello")),
            ev(status_update("${q}", "TASK_STATE_COMPLETED")),
        ]}},
        {"ended": {"stream": "q2"}},
    ])
    r_sub = requirement("a2a.v1.flow.subscribe", NOTES + " section 3.1.6 (SubscribeToTask: the current Task "
                        "first, then the task's updates; not on terminal tasks)",
                        "SubscribeToTask on a running task starts with the current Task, then delivers its later "
                        "updates and ends at a terminal state, on every open subscription (closing one does not "
                        "affect the others); on a terminal task it is UnsupportedOperation, on an unknown task "
                        "TaskNotFound.")
    flow("subscribe", r_sub, "A task started without streaming is followed by three subscriptions, one dropped "
         "early; the other two both see the cancellation and end.", [
        send("m-1", "wait", ok({"task": task("${t}", ACTIVE)}), configuration={"returnImmediately": True}),
        call("GetTask", {"id": "${t}"}, ok(task("${t}", ACTIVE))),
        {"open": {"stream": "s", "operation": "SubscribeToTask", "params": {"id": "${t}"}}},
        {"events": {"stream": "s", "expect": [ev({"task": task("${t}", ANY)})]}},
        {"open": {"stream": "s2", "operation": "SubscribeToTask", "params": {"id": "${t}"}}},
        {"events": {"stream": "s2", "expect": [ev({"task": task("${t}", ANY)})]}},
        {"open": {"stream": "s3", "operation": "SubscribeToTask", "params": {"id": "${t}"}}},
        {"events": {"stream": "s3", "expect": [ev({"task": task("${t}", ANY)})]}},
        {"close": {"stream": "s3"}},
        call("CancelTask", {"id": "${t}"}, ok(task("${t}", "TASK_STATE_CANCELED"))),
        {"events": {"stream": "s", "expect": [ev(status_update("${t}", "TASK_STATE_CANCELED"))]}},
        {"ended": {"stream": "s"}},
        {"events": {"stream": "s2", "expect": [ev(status_update("${t}", "TASK_STATE_CANCELED"))]}},
        {"ended": {"stream": "s2"}},
        {"open_refused": {"operation": "SubscribeToTask", "params": {"id": "${t}"},
                          "expect": err("UNSUPPORTED_OPERATION")}},
        {"open_refused": {"operation": "SubscribeToTask", "params": {"id": "no-such-task"},
                          "expect": err("TASK_NOT_FOUND")}},
    ])
    flow("subscribe-interrupted", r_sub, "A subscription to an INPUT_REQUIRED task follows the turn a later "
         "non-streaming message starts, to its end.", [
        send("m-1", "ask", ok({"task": task("${t}", "TASK_STATE_INPUT_REQUIRED")})),
        {"open": {"stream": "s", "operation": "SubscribeToTask", "params": {"id": "${t}"}}},
        {"events": {"stream": "s", "expect": [ev({"task": task("${t}", "TASK_STATE_INPUT_REQUIRED")})]}},
        send("m-2", "echo hello", ok({"task": task("${t}", "TASK_STATE_COMPLETED", artifacts=ECHO_ART)}),
             taskId="${t}"),
        {"events": {"stream": "s", "expect": [
            ev(status_update("${t}", "TASK_STATE_WORKING")),
            ev(artifact_update("${t}", "echo", "hello")),
            ev(status_update("${t}", "TASK_STATE_COMPLETED")),
        ]}},
        {"ended": {"stream": "s"}},
    ])
    r_resume = requirement("a2a.v1.flow.resume", "sdk: agentproto's resumable streams (crates/a2a README, "
                           "Streams): SSE ids are the task's event sequence numbers and Last-Event-ID replays "
                           "what followed (A2A 1.0.1 defines no replay, a2aproject/A2A#1986)",
                           "Every stream event carries an SSE id; SubscribeToTask with `Last-Event-ID: <id>` "
                           "first sends the current Task, then replays the task's events that followed that id, "
                           "then the new ones.")
    flow("resume-last-event-id", r_resume, "A stream dropped after three events is resumed with Last-Event-ID: "
         "the Task, then the events after the id, then the cancellation; resuming at the last id replays nothing.", [
        {"open": {"stream": "s1", "operation": "SendStreamingMessage", "params": {"message": msg("m-1", "wait")}}},
        {"events": {"stream": "s1", "expect": [
            ev({"task": task("${t}", "TASK_STATE_SUBMITTED")}, id="${e1}"),
            ev(status_update("${t}", "TASK_STATE_WORKING"), id="${e2}"),
            ev(artifact_update("${t}", "progress", "started"), id="${e3}"),
        ]}},
        {"close": {"stream": "s1"}},
        {"open": {"stream": "s2", "operation": "SubscribeToTask", "params": {"id": "${t}"}, "last_event_id": "${e1}"}},
        {"events": {"stream": "s2", "expect": [
            ev({"task": task("${t}", "TASK_STATE_WORKING")}),
            ev(status_update("${t}", "TASK_STATE_WORKING"), id="${e2}"),
            ev(artifact_update("${t}", "progress", "started"), id="${e3}"),
        ]}},
        {"open": {"stream": "s3", "operation": "SubscribeToTask", "params": {"id": "${t}"}, "last_event_id": "${e3}"}},
        {"events": {"stream": "s3", "expect": [ev({"task": task("${t}", "TASK_STATE_WORKING")})]}},
        call("CancelTask", {"id": "${t}"}, ok(task("${t}", "TASK_STATE_CANCELED"))),
        {"events": {"stream": "s2", "expect": [ev(status_update("${t}", "TASK_STATE_CANCELED"), id="${e4}")]}},
        {"ended": {"stream": "s2"}},
        {"events": {"stream": "s3", "expect": [ev(status_update("${t}", "TASK_STATE_CANCELED"), id="${e4}")]}},
        {"ended": {"stream": "s3"}},
    ])
    r_ri = requirement("a2a.v1.flow.return-immediately", NOTES + " section 3.2.2 (returnImmediately; a blocking "
                       "send returns at a terminal or interrupted state)",
                       "With returnImmediately a send answers at once with the task still active; without it, a "
                       "send answers when the task is terminal or interrupted (INPUT_REQUIRED); a follow-up "
                       "message naming the task continues it in the task's context, and one naming the task with "
                       "another context is refused.")
    flow("return-immediately", r_ri, "returnImmediately answers with an active task; a blocking send waits for "
         "INPUT_REQUIRED; a follow-up naming another context is refused, one naming only the task completes it.", [
        send("m-1", "wait", ok({"task": task("${t}", ACTIVE)}), configuration={"returnImmediately": True}),
        call("CancelTask", {"id": "${t}"}, ok(task("${t}", "TASK_STATE_CANCELED"))),
        send("m-2", "ask", ok({"task": task("${q}", "TASK_STATE_INPUT_REQUIRED", contextId="${qc}",
                                             history="$absent")}), configuration={"historyLength": 0}),
        call("GetTask", {"id": "${q}"}, ok(task("${q}", "TASK_STATE_INPUT_REQUIRED"))),
        send("m-3", "echo hello", {"error": {"reason": ANY, **P}}, taskId="${q}", contextId="another-context"),
        send("m-4", "echo hello", ok({"task": task("${q}", "TASK_STATE_COMPLETED", contextId="${qc}",
                                                      artifacts=ECHO_ART)}), taskId="${q}"),
        call("GetTask", {"id": "${q}"}, ok(task("${q}", "TASK_STATE_COMPLETED", history=[
            {"messageId": "m-2", "role": "ROLE_USER", "parts": [{"text": "ask"}], **P},
            {"messageId": "m-4", "role": "ROLE_USER", "parts": [{"text": "echo hello"}], **P}]))),
        call("GetTask", {"id": "${q}", "historyLength": 1}, ok(task("${q}", "TASK_STATE_COMPLETED", history=[
            {"messageId": "m-4", "role": "ROLE_USER", **P}]))),
    ])
    r_list = requirement("a2a.v1.flow.list-tasks", NOTES + " section 3.1.4 (ListTasks: cursor pagination, "
                         "nextPageToken always present, artifacts omitted unless includeArtifacts)",
                         "ListTasks filtered by context pages with pageSize and nextPageToken (empty on the last "
                         "page), reports the total, and omits artifacts unless includeArtifacts is true.")
    listed = {"contextId": "ctx-list", "status": status("TASK_STATE_COMPLETED"), "artifacts": "$absent", **P}
    flow("list-tasks-paging", r_list, "Three tasks in one context are listed two per page.", [
        send("m-1", "echo hello", ok({"task": task("${a}", "TASK_STATE_COMPLETED")}), contextId="ctx-list"),
        send("m-2", "echo hello", ok({"task": task("${b}", "TASK_STATE_COMPLETED")}), contextId="ctx-list"),
        send("m-3", "echo hello", ok({"task": task("${c}", "TASK_STATE_COMPLETED")}), contextId="ctx-list"),
        send("m-4", "echo hello", ok({"task": task(ANY, "TASK_STATE_COMPLETED")}), contextId="ctx-other"),
        call("ListTasks", {"contextId": "ctx-list", "pageSize": 2},
             ok({"tasks": [listed, listed], "nextPageToken": "${next}", "pageSize": 2, "totalSize": 3})),
        call("ListTasks", {"contextId": "ctx-list", "pageSize": 2, "pageToken": "${next}"},
             ok({"tasks": [listed], "nextPageToken": "", "pageSize": 2, "totalSize": 3})),
        call("ListTasks", {"contextId": "ctx-list", "pageSize": 1, "includeArtifacts": True},
             ok({"tasks": [{**listed, "artifacts": ECHO_ART}], "nextPageToken": ANY, "pageSize": 1,
                 "totalSize": 3})),
    ])
    r_msg = requirement("a2a.v1.flow.direct-message", NOTES + " section 3.1.1 (the agent may answer with a "
                        "Message; a message-only stream holds exactly one Message event)",
                        "An agent's direct reply is answered as `message` (no task) by SendMessage, and as one "
                        "message event followed by the end of the stream by SendStreamingMessage.")
    reply = {"message": {"messageId": ANY, "role": "ROLE_AGENT", "parts": [{"text": "hi"}], **P}}
    flow("direct-message", r_msg, "A `reply hi` message is answered with a direct message on both calls.", [
        send("m-1", "reply hi", ok(reply)),
        {"open": {"stream": "s", "operation": "SendStreamingMessage", "params": {"message": msg("m-2", "reply hi")}}},
        {"events": {"stream": "s", "expect": [ev(reply)]}},
        {"ended": {"stream": "s"}},
    ])
    r_push = requirement("a2a.v1.flow.push-configs", NOTES + " sections 3.1.7-3.1.10 (push notification config "
                         "operations; delete is idempotent)",
                         "A push config created for a task gets an id and is returned by Get and List; after Delete "
                         "it is gone (TaskNotFound) and a second Delete still succeeds.")
    hook = "https://example.com/hook"
    flow("push-config-crud", r_push, "Create, get, list and delete a task's push config.", [
        send("m-1", "echo hello", ok({"task": task("${t}", "TASK_STATE_COMPLETED")})),
        call("CreateTaskPushNotificationConfig", {"taskId": "${t}", "url": hook, "token": "tok"},
             ok({"id": "${cfg}", "taskId": "${t}", "url": hook, "token": "tok", **P})),
        call("GetTaskPushNotificationConfig", {"taskId": "${t}", "id": "${cfg}"},
             ok({"id": "${cfg}", "taskId": "${t}", "url": hook, "token": "tok", **P})),
        call("ListTaskPushNotificationConfigs", {"taskId": "${t}"},
             ok({"configs": [{"id": "${cfg}", "taskId": "${t}", "url": hook, **P}], **P})),
        call("DeleteTaskPushNotificationConfig", {"taskId": "${t}", "id": "${cfg}"}, ok({})),
        call("GetTaskPushNotificationConfig", {"taskId": "${t}", "id": "${cfg}"}, err("TASK_NOT_FOUND")),
        call("DeleteTaskPushNotificationConfig", {"taskId": "${t}", "id": "${cfg}"}, ok({})),
        call("CreateTaskPushNotificationConfig", {"taskId": "no-such-task", "url": hook}, err("TASK_NOT_FOUND")),
    ])
