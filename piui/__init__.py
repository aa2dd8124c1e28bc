"""PIUI: the desktop editor for PARASOL machine models, built on parasol_core."""

__version__ = "0.1.0"
