"""Labwright: drive laboratory instruments with natural-language requests, safely."""

__version__ = "0.1.0"
