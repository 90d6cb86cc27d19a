"""The HTTP service and its web page: `app.create_app(model)` (Starlette), served by
``arborparse serve`` on uvicorn."""
