"""The HTTP layer: thin blueprints over the search, catalog and write packages.

The app factory (`memseek.app`) registers the blueprints; this package imports none of its
modules, so importing one blueprint never loads the others.
"""
