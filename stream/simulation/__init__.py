"""Deterministic match-history simulator with known true skills, and its file writers."""

from stream.simulation.config import Matchmaker
from stream.simulation.core import SimulatedMatch, SimulationConfig, Simulator, simulate
from stream.simulation.writers import match_finished_event, write_csv, write_jsonl

__all__ = [
    "Matchmaker",
    "SimulatedMatch",
    "SimulationConfig",
    "Simulator",
    "match_finished_event",
    "simulate",
    "write_csv",
    "write_jsonl",
]
