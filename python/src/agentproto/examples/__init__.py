"""Runnable examples, also used by other tools as fixed contracts:

* `python -m agentproto.examples.echo_agent`: an ACP agent that streams the prompt back
  word by word (`agent_message_chunk`), asks permission for a pretend tool call when the
  prompt mentions "tool", and honours `session/cancel`;
* `python -m agentproto.examples.run_prompt [--allow|--reject] [--prompt TEXT] -- <agent command…>`:
  an ACP client that spawns the agent, runs one prompt and prints the updates.
"""
