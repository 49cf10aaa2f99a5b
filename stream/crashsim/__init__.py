"""A deterministic crash simulator: the real batch runner and processors on a simulated broker,
with seeded schedules of crashes at every point of the commit order, tables restored from
earlier flushes, reads interleaved in any order and event time in leaps; after each schedule,
nothing lost, doubled or stuck, and every player equal to an offline replay.

``skillstream crashsim`` runs it (stream/cli/crashsim.py); docs/simulator.md, "The crash
simulator", says what it draws and what it found.
"""
