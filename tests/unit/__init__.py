"""Unit tests: pure code, no database."""
