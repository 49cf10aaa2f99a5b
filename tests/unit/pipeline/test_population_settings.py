"""What a running mode's learned chain is stored under
(stream.pipeline.learnedpopulation.settings_of): a chain stored under other settings starts
again, so a changed ``[population] hold`` does, and a modes file that holds nothing keeps the
chains stored before the key existed."""

from __future__ import annotations

import dataclasses

from stream.config.modes import Modes, parse_modes
from stream.pipeline.learnedpopulation import Populations, settings_of
from stream.protocol.tables import PopulationRecord
from stream.ratings.modeconfig import ModeConfig
from stream.ratings.population import Population, PopulationConfig


def holding(*names: str) -> ModeConfig:
    table = {"default": {"population": {"hold": list(names)}}}
    return parse_modes(table, "test modes").get("duel")


def test_holding_nothing_adds_nothing_to_the_settings() -> None:
    plain = Modes().get("duel")
    assert holding() == plain
    assert settings_of(holding()) == settings_of(plain)
    assert "hold" not in settings_of(plain)


def test_what_is_held_is_part_of_the_settings_in_any_order() -> None:
    one = settings_of(holding("decisiveness"))
    assert one != settings_of(holding())
    assert one != settings_of(holding("debut_offset"))
    both = settings_of(holding("decisiveness", "deviation"))
    assert both == settings_of(holding("deviation", "decisiveness"))


def test_a_stored_chain_starts_again_when_the_hold_changes() -> None:
    record = PopulationRecord()
    before = Populations(Modes(), partitions=1)
    chain = before.chain(record, "duel", Modes().get("duel"))
    chain.current = dataclasses.replace(chain.current, decisiveness=0.7)
    assert before.chain(record, "duel", Modes().get("duel")).current.decisiveness == 0.7
    modes = parse_modes({"default": {"population": {"hold": ["decisiveness"]}}}, "test modes")
    after = Populations(modes, partitions=1).chain(record, "duel", modes.get("duel"))
    assert isinstance(after.current, Population) and after.current.decisiveness == 1.0


def test_a_chain_stored_before_parties_goes_on_and_a_party_edge_start_is_a_new_chain() -> None:
    plain = ModeConfig("m", population=PopulationConfig(window_days=1.0))
    # The key a worker before parties wrote: the start population without a party edge.
    assert "party_edge" not in settings_of(plain)
    assert settings_of(plain).endswith("drift_period=14.0, debut_offset=None)|rules 3")
    partied = ModeConfig("m", population=PopulationConfig(window_days=1.0, party_edge=50.0))
    assert "party_edge=50.0" in settings_of(partied)
