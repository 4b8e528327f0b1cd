"""The liquid handler: commands, twin, PyLabRobot adapter and simulated backend."""
