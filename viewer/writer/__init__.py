"""The writer of seed 000: agents that log a session the viewer reads.

Imports run one way: log <- agent <- session and tools <- demo; nothing from the reading side of the viewer.
"""
