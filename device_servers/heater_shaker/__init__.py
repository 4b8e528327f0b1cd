"""The heater-shaker: commands, twin, PyLabRobot adapter and simulated backend.

Public surface: :class:`~device_servers.heater_shaker.driver.HeaterShakerDriver` (what the
runtime plugs in) and the command records in :mod:`device_servers.heater_shaker.commands`.
"""
