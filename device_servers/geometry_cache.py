"""A JSON cache for labware geometry read from PyLabRobot.

Geometry depends only on the configuration and the PyLabRobot version; caching it lets a
simulation start without importing PyLabRobot. A cache that cannot be read or written only
costs time.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any


def default_cache_dir() -> Path:
    """Derived data that is safe to delete (deck geometry): $XDG_CACHE_HOME/labwright."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "labwright"


def cached_geometry(
    cache_dir: Path, name: str, key: Any, build: Callable[[], dict[str, Any]]
) -> dict[str, Any]:
    """``build()``'s result, from ``cache_dir`` when it was built for the same key before."""
    try:
        plr = metadata.version("pylabrobot")
    except metadata.PackageNotFoundError:  # pragma: no cover - it is a dependency
        plr = "?"
    blob = json.dumps({"plr": plr, "key": key, "format": 1}, sort_keys=True)
    path = cache_dir / f"{name}-{hashlib.sha256(blob.encode()).hexdigest()[:20]}.json"
    try:
        return dict(json.loads(path.read_text()))
    except (OSError, ValueError):
        pass
    built = build()
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(built))
        tmp.replace(path)
    except OSError:
        pass
    return built
