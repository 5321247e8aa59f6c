"""The HTTP layer: thin blueprints over the search, catalog and write packages."""

from __future__ import annotations

from flask import Flask

from memseek.api import health
from memseek.api import openapi


def register(app: Flask) -> None:
    for blueprint in (health.bp, openapi.bp):
        app.register_blueprint(blueprint)
