"""Memseek: a memory service for products and AI agents."""

__version__ = "0.1.0"
