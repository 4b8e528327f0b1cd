"""``python -m labwright.cli`` is ``python -m labwright`` (kept for scripts that spawn it)."""

from labwright.cli import main

main()
