"""The write path's size limits, in a module that imports nothing: the command line checks
`memseek import`'s arguments against them while it parses, without loading the write path."""

MAX_RECORDS = 1000
"""Records in one `POST /records` request, and in one `memseek import` batch."""
DEFAULT_JOBS = 2
MAX_JOBS = 16
"""Parallel streams `memseek import` writes on."""
