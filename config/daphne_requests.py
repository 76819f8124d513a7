"""How daphne reads requests: bodies untouched, its own refusals as JSON (docs/contracts.md §3.1).

daphne's request class is Twisted's `http.Request`, which parses every POST whose Content-Type is
`multipart/form-data` into `request.args` before daphne sees it (daphne never reads them), and answers a body it
cannot parse with a bare `400 Bad Request` and no body: a client sending a form to `/agent/chat` learnt nothing,
and the API's own 415 was never reached. `install()` swaps in a subclass that leaves the body to Django (where
the views answer any non-JSON body with their JSON 415) and words daphne's own refusals (an invalid header
name or value, a path that is not ASCII) as `{"detail": ...}` instead of its HTML page.

Malformed HTTP that Twisted refuses before a request exists (a request line that is not ASCII) stays Twisted's
bare 400: it is not a request of the API.
"""

from __future__ import annotations

import json
from typing import Any


def install() -> None:
    """Make daphne build its requests from `JSONRefusalRequest` (a no-op when daphne is not installed)."""
    try:
        from daphne import http_protocol
    except ImportError:  # another ASGI server: nothing of daphne's to change
        return
    if getattr(http_protocol.WebRequest, "passes_bodies_through", False):
        return

    class JSONRefusalRequest(http_protocol.WebRequest):
        passes_bodies_through = True

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs["parsePOSTFormSubmission"] = False
            super().__init__(*args, **kwargs)

        def basic_error(self, status: int, status_text: bytes, body: str) -> None:
            content = json.dumps({"detail": body if body.endswith(".") else f"{body}."}).encode()
            headers = [
                (b"Content-Type", b"application/json"),
                (b"Content-Length", str(len(content)).encode()),
            ]
            self.handle_reply({"type": "http.response.start", "status": status, "headers": headers})
            self.handle_reply({"type": "http.response.body", "body": content})

    # daphne's HTTPFactory.buildProtocol reads the module's `WebRequest` for every new connection.
    http_protocol.WebRequest = JSONRefusalRequest
