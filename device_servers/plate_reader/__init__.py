"""The plate reader: commands, twin, PyLabRobot adapter and simulated backend.

Public surface: :class:`PlateReaderDriver` (in ``driver``), the command records in
``commands`` and :class:`PlateReaderTwin` (in ``twin``). Only ``adapter`` and ``sim_backend``
import PyLabRobot, and they are imported only when an instrument is driven.
"""
