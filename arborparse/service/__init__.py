"""The HTTP service and its web page: `app.create_app(model)` (Starlette), served by
``arborparse serve`` on uvicorn."""

# the service's defaults (here, not in `workers`, so that the command line reads them
# without importing asyncio and the process pools)
AGING = 1000.0  # words per second: a request of w words ranks as if it came w / AGING s later
TIMEOUT = 30.0  # seconds a request may wait and run together
SHORT = 50  # words: a request this short may also go to the spare worker
