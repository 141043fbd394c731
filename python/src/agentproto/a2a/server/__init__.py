"""The A2A server: an ASGI application (`create_app`) running an executor
(`agentproto.a2a.executor`) on a store (`agentproto.a2a.store`).

```python
import uvicorn
from agentproto.a2a.server import create_app

app = create_app(MyAgent(), card)
uvicorn.run(app, host="127.0.0.1", port=8080)
```

Running it needs an ASGI server: `pip install agentproto[a2a-server]` brings uvicorn.
"""

from agentproto.a2a.server.app import A2aApp, create_app
from agentproto.a2a.server.core import CallContext, Interceptor, ServerOptions, StreamEvent
from agentproto.a2a.server.turns import Core

__all__ = ["A2aApp", "CallContext", "Core", "Interceptor", "ServerOptions", "StreamEvent", "create_app"]
