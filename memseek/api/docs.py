"""`/docs`: the API described by `GET /openapi.json`, browsable (Swagger UI), and `/` leading there.

Swagger UI's files come from the `flask-swagger-ui` package (pinned), served by the service
itself: the page works offline and loads nothing from elsewhere. Like `GET /openapi.json`, the
page needs no key; a request tried from it does (the page's Authorize button takes one).
"""

from __future__ import annotations

from pathlib import Path

import flask_swagger_ui
from flask import Blueprint
from flask import Response
from flask import redirect
from flask import send_from_directory

from memseek.api.openapi import Operation
from memseek.api.openapi import document

bp = Blueprint("docs", __name__)

SWAGGER_UI = Path(flask_swagger_ui.__file__).resolve().parent / "dist"
PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Memseek API</title>
  <link rel="stylesheet" href="/docs/swagger-ui.css">
  <link rel="icon" type="image/png" href="/docs/favicon-32x32.png">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/swagger-ui-bundle.js"></script>
  <script src="/docs/swagger-ui-standalone-preset.js"></script>
  <script>
    window.ui = SwaggerUIBundle({
      url: "/openapi.json",
      dom_id: "#swagger-ui",
      presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
      layout: "StandaloneLayout",
      deepLinking: true,
      persistAuthorization: true,
      validatorUrl: null
    });
  </script>
</body>
</html>
"""


@bp.get("/")
def root() -> Response:
    return redirect("/docs", code=302)  # type: ignore[return-value]


@bp.get("/docs")
def page() -> Response:
    return Response(PAGE, mimetype="text/html")


@bp.get("/docs/<path:asset>")
def asset(asset: str) -> Response:
    return send_from_directory(SWAGGER_UI, asset)


document(Operation("GET", "/", "Redirects to /docs", responses=((302, "To /docs"),), public=True))
document(
    Operation("GET", "/docs", "This API, browsable (Swagger UI)", responses=((200, "HTML"),), public=True)
)
document(Operation("GET", "/docs/{asset}", "Swagger UI's files", responses=((200, "A file"),), public=True))
