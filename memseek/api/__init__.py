"""The HTTP layer: thin blueprints over the search, catalog and write packages."""

from __future__ import annotations

from flask import Flask

from memseek import mcp
from memseek.api import health
from memseek.api import openapi
from memseek.api import rank
from memseek.api import records
from memseek.api import search
from memseek.api import view_query
from memseek.api import views


def register(app: Flask) -> None:
    for blueprint in (health.bp, openapi.bp, views.bp, view_query.bp, rank.bp, records.bp, search.bp, mcp.bp):
        app.register_blueprint(blueprint)
