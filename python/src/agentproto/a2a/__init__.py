"""A2A 1.0 for Python: the generated types (`agentproto.a2a.v1`), ProtoJSON decoding and
canonical encoding, and the bindings' pure decoders (JSON-RPC and HTTP+JSON)."""
