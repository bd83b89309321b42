"""The model server for the settings dialog: its model list and Test connection, off the
GUI thread. Qt-free.

The window never imports ``core.models``: it awaits these coroutines (each runs its HTTP
requests on a worker thread) and shows what they return or the KnownError they raise,
which says what is wrong (connection refused, timeout, 401, no such model, not
OpenAI-compatible). The API key lives in its own private file (``core.settings``).
"""

from __future__ import annotations

import asyncio

from desktop_app.core.models.server_http import (
    ConnectionReport,
    check_connection,
    server_model_names,
)
from desktop_app.core.settings import load_server_key, normalize_server_url, save_server_key

__all__ = [
    "ConnectionReport",
    "list_server_models",
    "load_server_key",
    "normalize_server_url",
    "save_server_key",
    "test_connection",
]


async def list_server_models(url: str, api_key: str = "") -> list[str]:
    """The model ids the server lists (GET /v1/models). Raises KnownError."""
    return await asyncio.to_thread(server_model_names, url, api_key)


async def test_connection(url: str, model: str = "", api_key: str = "") -> ConnectionReport:
    """List the models, find ``model`` and ask it for one token. Raises KnownError."""
    return await asyncio.to_thread(check_connection, url, model, api_key)
