"""skillstream: streaming skill ratings for online games."""

__version__ = "0.1.0"
