"""Labwright's web server: the HTTP API for runs, live progress and the approval page.

:func:`create_app` builds the Starlette application over one lab's
:class:`~labwright.operations.Operations`; ``labwright web`` serves it next to a runner.
"""

from labwright.web.app import create_app

__all__ = ["create_app"]
