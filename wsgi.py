"""WSGI entry point: `waitress-serve wsgi:app` or any WSGI server. Settings come from the environment."""

from memseek.app import create_app

app = create_app()
