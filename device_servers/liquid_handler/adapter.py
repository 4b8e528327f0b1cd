"""The liquid handler's adapter: the only module of this server (with the simulated backend)
that imports PyLabRobot.

It builds the PyLabRobot deck from the lab configuration, constructs the backend (simulated by
default; a hardware backend only when configured), executes primitives through the real
``LiquidHandler`` frontend and translates every PyLabRobot or backend exception into a
Labwright :class:`DeviceError` with a code, once, here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pylabrobot.resources as plr_resources
from pylabrobot.liquid_handling import LiquidHandler
from pylabrobot.liquid_handling.backends.backend import LiquidHandlerBackend
from pylabrobot.resources import Container, ItemizedResource, Resource, TipRack
from pylabrobot.resources import errors as plr_errors
from pylabrobot.resources.volume_tracker import set_volume_tracking

from device_servers.errors import BackendFailed, Code, ConfigurationError, DeviceError
from device_servers.kind import AdapterBase
from device_servers.liquid_handler.commands import Primitive
from device_servers.liquid_handler.config import LiquidHandlerConfig, deck_location
from device_servers.liquid_handler.sim_backend import SimulatedLiquidHandlerBackend
from device_servers.sim.world import PhysicalError, SimWorld

# The twin is Labwright's belief and validates first; PyLabRobot's volume trackers would be a
# second, divergent belief, so they stay off. The channel tip trackers stay on.
set_volume_tracking(False)


def _factory(name: str, field: str) -> Any:
    factory = getattr(plr_resources, name, None)
    if not callable(factory):
        raise ConfigurationError(f"{field}: {name!r} is not a PyLabRobot resource name")
    return factory


def describe_resource(res: Resource) -> dict[str, Any]:
    """Geometry the twin needs: kind, grid, names, volumes."""
    if isinstance(res, TipRack):
        names = [res.get_child_identifier(s) for s in res.get_all_items()]
        tip = res.get_item(0).make_tip()
        return {
            "kind": "tip_rack",
            "type": type(res).__name__,
            "rows": res.num_items_y,
            "cols": res.num_items_x,
            "names": names,
            "tip_max_volume": float(tip.maximal_volume),
        }
    if isinstance(res, ItemizedResource):
        items = res.get_all_items()
        names = [res.get_child_identifier(w) for w in items]
        return {
            "kind": "plate",
            "type": type(res).__name__,
            "rows": res.num_items_y,
            "cols": res.num_items_x,
            "names": names,
            "max_volumes": {n: float(w.max_volume) for n, w in zip(names, items, strict=True)},
        }
    if isinstance(res, Container):
        return {
            "kind": "plate",
            "type": type(res).__name__,
            "rows": 1,
            "cols": 1,
            "names": ["A1"],
            "max_volumes": {"A1": float(res.max_volume)},
        }
    raise ConfigurationError(f"{res.name}: labware of type {type(res).__name__} is not supported")


def describe_deck(config: LiquidHandlerConfig) -> dict[str, Any]:
    """Where things are on the deck, in mm (PyLabRobot's frame: x right, y back): the deck,
    its carriers, each labware item and the centre and size of each of its wells or tips."""
    deck = build_deck(config)

    def box(res: Any) -> dict[str, float]:
        at = res.get_absolute_location()
        return {
            "x": round(at.x, 2),
            "y": round(at.y, 2),
            "w": round(res.get_size_x(), 2),
            "h": round(res.get_size_y(), 2),
        }

    labware = {}
    for lw in config.labware:
        res = deck.get_resource(lw.id)
        items = {}
        for item in res.get_all_items() if isinstance(res, ItemizedResource) else []:
            where = item.location
            items[res.get_child_identifier(item)] = {
                "x": round(where.x + item.get_size_x() / 2, 2),
                "y": round(where.y + item.get_size_y() / 2, 2),
                "w": round(item.get_size_x(), 2),
                "h": round(item.get_size_y(), 2),
                "round": "CIRCLE" in str(getattr(item, "cross_section_type", "")),
            }
        labware[lw.id] = {
            **box(res),
            "kind": "tip_rack" if isinstance(res, TipRack) else "plate",
            "type": lw.type,
            "carrier": lw.carrier,
            "slot": lw.slot,
            "items": items,
        }
    return {
        "deck": {"type": config.deck, "w": deck.get_size_x(), "h": deck.get_size_y()},
        "carriers": {
            c.id: {**box(deck.get_resource(c.id)), "type": c.type} for c in config.carriers
        },
        "labware": labware,
    }


def _translate(exc: BaseException, where: str) -> DeviceError | None:
    """The liquid handler's own failures (``where``: ``aspirate at plate_1:A1``)."""
    if isinstance(exc, PhysicalError):
        table = {
            "no_tip": (Code.NO_TIP, "re-read the instrument state; pick up a tip first"),
            "pickup_failed": (
                Code.NO_TIP,
                "re-read the instrument state, then pick up a tip from another spot",
            ),
            "tip_present": (Code.TIP_ALREADY_ATTACHED, "re-read the instrument state"),
            "too_little_liquid": (
                Code.INSUFFICIENT_VOLUME,
                "re-read the well volumes; refill the source or lower the volume",
            ),
            "labware_absent": (
                Code.UNKNOWN_LABWARE,
                "the labware is not at its deck slot (moved away?): read_back, then have the "
                "plate mover bring it back",
            ),
        }
        code, hint = table.get(exc.kind, (Code.ADAPTER_FAULT, "ask a person to check"))
        return BackendFailed(code, f"{where}: {exc}", hint)
    if isinstance(exc, plr_errors.HasTipError):
        return BackendFailed(Code.TIP_ALREADY_ATTACHED, str(exc), "re-read the instrument state")
    if isinstance(exc, plr_errors.NoTipError):
        return BackendFailed(Code.NO_TIP, str(exc), "re-read the instrument state")
    if isinstance(exc, plr_errors.TooLittleLiquidError):
        return BackendFailed(Code.INSUFFICIENT_VOLUME, str(exc), "re-read the well volumes")
    if isinstance(exc, plr_errors.TooLittleVolumeError):
        return BackendFailed(Code.WELL_OVERFLOW, str(exc), "re-read the well volumes")
    return None


def build_deck(config: LiquidHandlerConfig) -> Any:
    """The PyLabRobot deck of a liquid-handler configuration (names the field on error)."""
    cfg = config
    deck = _factory(cfg.deck, "deck")()
    carriers: dict[str, Any] = {}
    for i, spec in enumerate(cfg.carriers):
        try:
            carrier = _factory(spec.type, f"carriers[{i}].type")(name=spec.id)
            deck.assign_child_resource(carrier, rails=spec.rails)
        except ConfigurationError:
            raise
        except Exception as exc:
            raise ConfigurationError(
                f"carriers[{i}]: cannot place {spec.type} at rails {spec.rails}: {exc}"
            ) from exc
        carriers[spec.id] = carrier
    for i, lw_spec in enumerate(cfg.labware):
        if lw_spec.carrier not in carriers:
            raise ConfigurationError(f"labware[{i}].carrier: no carrier {lw_spec.carrier!r}")
        carrier = carriers[lw_spec.carrier]
        try:
            resource = _factory(lw_spec.type, f"labware[{i}].type")(name=lw_spec.id)
            carrier[lw_spec.slot] = resource
        except ConfigurationError:
            raise
        except Exception as exc:
            raise ConfigurationError(
                f"labware[{i}]: cannot put {lw_spec.type} in "
                f"{lw_spec.carrier} slot {lw_spec.slot}: {exc}"
            ) from exc
    return deck


class LiquidHandlerAdapter(AdapterBase[LiquidHandlerConfig]):
    """PyLabRobot ``LiquidHandler`` on the configured deck and backend."""

    backend_base = LiquidHandlerBackend

    def __init__(
        self,
        config: LiquidHandlerConfig,
        world: SimWorld | None,
        liquids_of: Callable[[LiquidHandlerConfig, dict[str, Any]], list[dict[str, Any]]],
    ) -> None:
        """``liquids_of(config, catalogue)``: the configured starting liquids (the driver's)."""
        super().__init__(config, world)
        self._liquids_of = liquids_of
        self.deck = build_deck(config)
        self.locations = {
            lw.id: deck_location(config.id, lw.carrier, lw.slot) for lw in config.labware
        }
        self.catalogue = {
            lw.id: describe_resource(self.deck.get_resource(lw.id)) for lw in config.labware
        }

    def simulated_backend(self, world: SimWorld) -> SimulatedLiquidHandlerBackend:
        return SimulatedLiquidHandlerBackend(
            world, self.config.id, self.config.num_channels, self.locations
        )

    def make_frontend(self) -> LiquidHandler:
        return LiquidHandler(backend=self.backend, deck=self.deck)

    @property
    def lh(self) -> LiquidHandler:
        return self.frontend

    # ------------------------------------------------------------------ lifecycle
    async def before_setup(self) -> None:
        if self.sim is not None and self.world is not None:
            self.world.seed(
                self.config.id,
                self.catalogue,
                self._liquids_of(self.config, self.catalogue),
                self.config.num_channels,
            )
            for lw_id, where in self.locations.items():
                self.world.place_plate(lw_id, where)

    async def after_setup(self) -> None:
        await self._sync_head()

    # ------------------------------------------------------------------ commands
    def where(self, prim: Primitive) -> str:
        return f"{prim.op} at " + (f"{prim.labware}:{prim.well}" if prim.labware else "trash")

    def translate_own(self, exc: BaseException, where: str) -> DeviceError | None:
        return _translate(exc, where)

    async def call(self, prim: Primitive) -> list[dict[str, Any]] | None:
        """Perform one primitive; no events beyond the twin's prediction."""
        await self._call(prim)
        return None

    async def _call(self, prim: Primitive) -> None:
        ch = [prim.channel]
        if prim.op == "pick":
            rack = self.deck.get_resource(prim.labware)
            await self.lh.pick_up_tips([rack.get_item(prim.well)], use_channels=ch)
        elif prim.op == "drop":
            if prim.labware is None:
                await self.lh.discard_tips(use_channels=ch)
            else:
                rack = self.deck.get_resource(prim.labware)
                await self.lh.drop_tips(
                    [rack.get_item(prim.well)], use_channels=ch, allow_nonzero_volume=True
                )
        else:
            res = self.deck.get_resource(prim.labware)
            target = res.get_item(prim.well) if isinstance(res, ItemizedResource) else res
            call = self.lh.aspirate if prim.op == "aspirate" else self.lh.dispense
            await call([target], vols=[prim.volume], use_channels=ch)

    # ------------------------------------------------------------------ read back
    async def observe(self, labware: set[str] | None = None) -> dict[str, Any] | None:
        """What the instrument reports of itself; None where it cannot tell."""
        ids = self.catalogue.keys() if labware is None else labware & self.catalogue.keys()
        sim = self.sim
        if sim is not None:
            return sim.read_back({i: self.catalogue[i]["kind"] for i in ids})
        presence = await self.hardware_read(self.backend.request_tip_presence)
        if presence is None:
            return None
        return {
            "wells": {},
            "tips": {},
            "channels": [{"tip": {} if p else None, "contents": None} for p in presence],
        }

    async def _sync_head(self) -> None:
        """Make PyLabRobot's channel tip trackers agree with the instrument."""
        seen = await self.observe(set())
        if not seen:
            return
        for idx, chan in enumerate(seen["channels"]):
            head = self.lh.head[idx]
            if chan["tip"] and not head.has_tip:
                rack = self.deck.get_resource(chan["tip"]["rack"])
                head.add_tip(rack.get_item(chan["tip"]["spot"]).make_tip(), commit=True)
            elif not chan["tip"] and head.has_tip:
                head.remove_tip(commit=True)

    async def resync(self) -> dict[str, Any] | None:
        """Full read back, and the frontend's tip trackers brought in line with it."""
        await self._sync_head()
        return await self.observe(None)
