"""Labwright: drive laboratory instruments with natural-language requests, safely."""

from labwright import _lazy_packages

_lazy_packages.install()  # before anything imports mcp or langgraph: see the module

__version__ = "0.1.0"
