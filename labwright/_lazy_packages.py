"""Run the ``__init__`` of a few third-party packages only when something asks it for a name.

``mcp/__init__.py`` imports the MCP client session and, through ``mcp/server/__init__.py``,
FastMCP with uvicorn, Starlette and sse-starlette; ``langgraph_sdk/__init__.py`` imports the
LangGraph Platform client and websockets. Labwright imports their submodules
(``mcp.types``, ``mcp.server.lowlevel``, ``mcp.client.session``; LangGraph itself needs only
``langgraph_sdk.auth.types``), so without this an instrument server would load an MCP client
and a web framework it never uses, and every process would load a platform client: several
hundred milliseconds of every start. ``mcp.shared.session`` imports httpx for one status code
it reads on a timeout, so a stdio server or client would load an HTTP client it never uses:
httpx is deferred too. ``httpx/__init__.py`` imports httpx's own command-line client (click,
rich, pygments) whenever those are installed; it gets a stand-in whose ``main`` loads the
real one when run.
``langchain_core`` imports ``langsmith.run_trees`` whenever LangGraph is imported, and that
imports one submodule of ``langsmith.types`` (LangSmith's generated API models) whose
``__init__`` builds some 150 modules of pydantic classes: about 0.1 s of every task process,
though nothing traces. ``langsmith.types`` is deferred (with ``langsmith``, its parent, whose
own ``__init__`` is a table of names it imports when asked): the submodule is imported as
usual, and ``langsmith.types.Run`` is there when someone asks for it.

:func:`install` puts each such package in ``sys.modules`` as the module the import system
would make (its ``__path__`` set, so submodules import as usual) whose ``__init__`` code runs
the first time anyone asks it for a name it does not hold yet: ``from mcp import
ClientSession`` still works, it only happens when it is needed.
"""

from __future__ import annotations

import importlib.util
import sys
import types
from typing import Any

PACKAGES = ("mcp", "mcp.server", "langgraph_sdk", "httpx", "langsmith", "langsmith.types")


class _Deferred(types.ModuleType):
    """A package whose ``__init__`` has not run yet."""

    def __getattr__(self, name: str) -> Any:
        state = self.__dict__
        if state.get("_labwright_init_ran"):
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        state["_labwright_init_ran"] = True
        spec = self.__spec__
        assert spec is not None and spec.loader is not None
        spec.loader.exec_module(self)
        return getattr(self, name)


def _defer(name: str) -> None:
    if name in sys.modules:
        return  # already imported: nothing left to save
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        return
    module = importlib.util.module_from_spec(spec)
    module.__class__ = _Deferred
    sys.modules[name] = module
    parent, _, child = name.rpartition(".")
    if parent:
        setattr(sys.modules[parent], child, module)


def _httpx_main(*args: Any, **kwargs: Any) -> Any:
    """httpx's command-line client, loaded when it is run (``httpx/__init__`` imports it
    eagerly whenever click and rich are installed, loading both into every MCP process)."""
    sys.modules.pop("httpx._main", None)
    import httpx._main

    return httpx._main.main(*args, **kwargs)


def _stand_in_for_httpx_cli() -> None:
    if "httpx" in sys.modules or "httpx._main" in sys.modules:
        return
    stand_in = types.ModuleType("httpx._main", "httpx's CLI, imported when it runs")
    stand_in.main = _httpx_main  # type: ignore[attr-defined]
    sys.modules["httpx._main"] = stand_in


def install() -> None:
    """Defer the ``__init__`` of :data:`PACKAGES` (parents first) and httpx's CLI."""
    _stand_in_for_httpx_cli()  # first: httpx is in sys.modules once it is deferred
    for name in PACKAGES:
        _defer(name)
