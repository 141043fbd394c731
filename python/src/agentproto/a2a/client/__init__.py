"""The A2A client (`A2aClient`): JSON-RPC and HTTP+JSON over a small asyncio HTTP/1.1
client of its own (`agentproto.a2a.client.http`), so msgspec stays the one dependency."""

from agentproto.a2a.client.client import A2aClient, ClientError, StreamItem, fetch_card
from agentproto.a2a.errors import PeerError

__all__ = ["A2aClient", "ClientError", "PeerError", "StreamItem", "fetch_card"]
