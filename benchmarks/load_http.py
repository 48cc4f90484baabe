"""HTTP/1.1 GET over asyncio streams, with cookies: a tab's first request, without a thread per request.

The load test's sessions GET their page before opening the websocket, as a browser does,
to be given the balancer's affinity cookie; a hundred of them at once would queue behind
urllib in a thread pool. Enough HTTP for that: one request per connection
(`Connection: close`), the whole response read, no chunked decoding (the body is not used).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit


class HttpError(OSError):
    """Not an HTTP response."""


@dataclass(frozen=True)
class HttpResponse:
    status: int
    headers: list[tuple[str, str]]
    body: bytes

    def header(self, name: str) -> str | None:
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)

    def cookies(self) -> dict[str, str]:
        """name → value of every Set-Cookie (attributes dropped)."""
        found = {}
        for key, value in self.headers:
            if key.lower() == "set-cookie":
                name, _, rest = value.partition("=")
                found[name.strip()] = rest.split(";", 1)[0].strip()
        return found


def parse_http_response(raw: bytes) -> HttpResponse:
    """A whole HTTP/1.1 response (read to the end of a `Connection: close` exchange)."""
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
        raise HttpError(f"not an HTTP response: {lines[0][:80]!r}")
    headers = [(k.strip(), v.strip()) for k, _, v in (line.partition(":") for line in lines[1:] if line)]
    return HttpResponse(int(parts[1]), headers, body)


def cookie_header(cookies: Mapping[str, str]) -> str:
    return "; ".join(f"{name}={value}" for name, value in cookies.items())


async def http_get(
    base_url: str, path: str, cookies: Mapping[str, str] | None = None, timeout_s: float = 10
) -> HttpResponse:
    """GET over a fresh connection, in the event loop (no thread per request)."""
    where = urlsplit(base_url)
    host, port = where.hostname or "127.0.0.1", where.port or 80
    request = f"GET {path} HTTP/1.1\r\nHost: {where.netloc}\r\nConnection: close\r\nAccept: */*\r\n"
    if cookies:
        request += f"Cookie: {cookie_header(cookies)}\r\n"

    async def exchange() -> bytes:
        reader, writer = await asyncio.open_connection(host, port)
        try:
            writer.write((request + "\r\n").encode("latin-1"))
            await writer.drain()
            return await reader.read()
        finally:
            writer.close()

    return parse_http_response(await asyncio.wait_for(exchange(), timeout_s))
