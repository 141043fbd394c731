"""Terminals, both sides (ACP v1): the agent's `TerminalHandle` on a command it runs
through the client, and `Terminals`, a ready-made client implementation of the five
`terminal/*` requests. The twin of `crates/acp/src/terminal/`: the same requests get the
same answers, byte for byte where the wire is concerned.

Agent side
----------
An agent whose client advertised `terminal: true` asks it to run commands.
`TerminalHandle.create(cx, request)` sends `terminal/create` and wraps the id it gets
back, so the other four requests need no ids (`output()`, `wait_for_exit()`, `kill()`,
`release()`), and `as_tool_call_content()` embeds the terminal in a tool call. The agent
must release every terminal it creates: call `release()` (a second call does nothing) or
use the handle as an async context manager.

Client side
-----------
`Terminals` runs each command as a child process: no shell and no pseudo terminal, the
`args` passed as they are, the `env` entries added to this process's environment, stdin
the null device, stdout and stderr read into one output buffer in the order they are
read. Each command runs in a process group of its own, which ends with it (as in the
Rust SDK): what the command leaves running in the background is killed when it exits,
and `terminal/kill`, `terminal/release` and closing the `Terminals` kill the whole group,
so nothing a command starts outlives it. A client handler forwards each request in one line
(`return await self.terminals.output(params)`).

Output is kept up to the request's `outputByteLimit` (default `DEFAULT_OUTPUT_LIMIT`,
1 MiB, and never more than the `max_output_limit`, by default 16 MiB). Past the limit the
oldest bytes are dropped, the cut moved forward to the next character boundary, and
`truncated` reported. Output is decoded as UTF-8 when it is read: invalid bytes become
U+FFFD, and a character whose last bytes have not been written yet is held back while the
command runs. The exit status is the exit code, or the signal's name (`"SIGKILL"`,
`"SIGTERM"`, ...; an uncommon signal as its number) with `exitCode: null`.

A terminal belongs to the session that created it. Errors, raised as `RequestError`:

* -32002 with `{"terminalId": …}`: an unknown or released terminal id, or another
  session's terminal;
* -32602 with `{"path": "$.params…", "expected": …, "found": …}`: an empty command, a
  NUL byte in `command`, `args` or `env`, a bad variable name;
* -32602 with the path `$.params.cwd`: a `cwd` that is not absolute, lies outside the
  roots, does not exist or is not a directory;
* -32603 without data, the message naming the command: the command cannot be started.

With `roots` the working directory is confined to them (see `Terminals`); that is not a
sandbox: the command itself can reach whatever the client process can.

Where Python differs from the Rust SDK: a handle is not released when it is collected
(Python cannot await there), so use `async with` or call `release()`. Requests after `aclose()`, and waits whose
process could not be collected when the terminals were closed, are answered -32603.
"""

from __future__ import annotations

from agentproto.acp.terminal.handle import TerminalHandle
from agentproto.acp.terminal.terminals import CWD_PATH, DEFAULT_MAX_OUTPUT_LIMIT, DEFAULT_OUTPUT_LIMIT, Terminals

__all__ = ["CWD_PATH", "DEFAULT_MAX_OUTPUT_LIMIT", "DEFAULT_OUTPUT_LIMIT", "TerminalHandle", "Terminals"]
