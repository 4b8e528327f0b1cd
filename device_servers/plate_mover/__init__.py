"""The plate mover: a robotic arm moving plates between named locations of the lab.

Public surface: :class:`PlateMoverDriver` (``device_servers.plate_mover.driver``), its commands
(``move_plate``, ``home``) and its twin. Only ``adapter.py`` and ``sim_backend.py`` import
PyLabRobot.
"""
