"""`/ui`: the inspector, a page for people looking into a running service.

Static HTML, JavaScript and CSS shipped in the package (`memseek/api/ui/`), no build step. The
page itself needs no key: it asks for one once, keeps it in the tab's session storage, and sends
it with every API request it makes, so it sees exactly what that key's workspace sees.
"""

from __future__ import annotations

from pathlib import Path

from flask import Blueprint
from flask import Response
from flask import send_from_directory

from memseek.api.openapi import Operation
from memseek.api.openapi import document

bp = Blueprint("inspector", __name__)

FILES = Path(__file__).resolve().parent / "ui"


@bp.get("/ui")
def page() -> Response:
    return send_from_directory(FILES, "index.html")


@bp.get("/ui/<path:asset>")
def asset(asset: str) -> Response:
    return send_from_directory(FILES, asset)


document(
    Operation(
        "GET", "/ui", "The inspector (HTML; it asks for a key)", responses=((200, "HTML"),), public=True
    )
)
document(Operation("GET", "/ui/{asset}", "The inspector's files", responses=((200, "A file"),), public=True))
