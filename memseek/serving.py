"""`memseek serve` for people: the port bound first, one banner, one line when the port is taken.

The listening socket is bound before anything else starts (the embedded database, migrations,
the catalog): a taken port is reported at once, in one line, with its own exit status
(`EXIT_PORT_IN_USE`), instead of after a slow start and as a traceback. The banner is printed
only once the socket is bound, so "listening" is never printed by a process that cannot listen.
"""

from __future__ import annotations

import errno
import shlex
import shutil
import socket
from dataclasses import dataclass
from pathlib import Path

from memseek.errors import ConfigError

DEFAULT_URL = "http://127.0.0.1:8000"
"""Where `memseek serve` listens by default, and where the HTTP commands look (MEMSEEK_URL)."""
EXIT_PORT_IN_USE = 3
"""`memseek serve`'s exit status when its port is taken (2 is every other start-up error)."""


class PortInUse(Exception):
    """The port `memseek serve` was told to listen on is taken by another process."""

    def __init__(self, port: int) -> None:
        super().__init__(f"port {port} is in use; pass --port N or stop the other process")


def bind(host: str, port: int) -> socket.socket:
    """A TCP socket bound to `host`:`port` (not yet listening: the WSGI server does that).
    `PortInUse` when the port is taken; `ConfigError` for any other reason it cannot be bound."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except socket.gaierror as exc:
        raise ConfigError(f"cannot listen on {host!r}: {exc.strerror}") from None
    sock = socket.socket(family, kind, proto)
    # As waitress does: a port whose last connections are in TIME_WAIT can be bound again at once
    # (a port another process listens on still cannot).
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise PortInUse(port) from None
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    return sock


def public_url(host: str, port: int) -> str:
    """The URL to print for a server bound to `host`: a wildcard address is reached on loopback."""
    shown = "127.0.0.1" if host in ("", "0.0.0.0", "::") else host
    return f"http://[{shown}]:{port}" if ":" in shown else f"http://{shown}:{port}"


def invocation(argv0: str, executable: str) -> str:
    """How the person who started `memseek serve` runs `memseek` again, so every command the
    banner suggests runs as pasted: `memseek` when that name on PATH is this very program, else
    the path it was started by (`.venv/bin/memseek` in a clone whose virtual environment is not
    activated), or `python -m memseek` with this interpreter."""
    if Path(argv0).name == "__main__.py":
        return f"{shlex.quote(executable)} -m memseek"
    on_path = shutil.which("memseek")
    if on_path is not None and Path(on_path).resolve() == Path(argv0).resolve():
        return "memseek"
    return shlex.quote(argv0)


@dataclass(frozen=True, slots=True)
class Banner:
    """What `memseek serve` tells a person once it listens."""

    url: str
    key: str | None
    """The `default` workspace's key when this start created it (shown once), else None."""
    embedded: Path | None
    """The embedded database's data directory, or None with DATABASE_URL."""
    command: str = "memseek"
    """How the person runs `memseek` (`invocation`)."""

    def lines(self) -> list[str]:
        """The banner: where the service and its docs are, the key or how to get one, what to try.
        A key appears alone on its own line (scripts read it as the line starting `msk_`), and
        nowhere else: a later start prints no key at all."""
        lines = [
            f"Memseek is listening on {self.url}",
            f"  API docs:   {self.url}/docs",
            f"  Inspector:  {self.url}/ui",
        ]
        if self.embedded is not None:
            lines.append(
                f"  Database:   embedded PostgreSQL in {self.embedded} (see: {self.command} db status)"
            )
        lines.append("")
        lines += self._key_lines()
        lines += ["", "Try it:", *self._try_lines(), "", "Press Ctrl-C to stop."]
        return lines

    def _key_lines(self) -> list[str]:
        if self.key is None:
            return [
                "Workspace 'default' exists; its key was shown when it was created.",
                f"Mint another key with: {self.command} key create default",
            ]
        return ["Created workspace 'default'. Its API key (shown once, keep it):", self.key]

    def _try_lines(self) -> list[str]:
        key = "KEY=" + self.key if self.key is not None else "KEY=<the key>"
        # The commands for people (memseek search, views, view) read MEMSEEK_URL and MEMSEEK_API_KEY.
        where = "" if self.url == DEFAULT_URL else f"MEMSEEK_URL={self.url} "
        return [
            f"  export {key}",
            f'  curl -H "Authorization: Bearer $KEY" {self.url}/collections',
            f"  {where}MEMSEEK_API_KEY=$KEY {self.command} views",
        ]
