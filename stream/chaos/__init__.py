"""A fault harness for the live pipeline: real workers on the local stack, worker kills, a
frozen broker and a frozen Redis, and checks that nothing was lost or applied twice.

``skillstream chaos`` runs it (stream/cli/chaos.py); ``run_chaos`` is the same in-process.
"""

from stream.chaos.run import ChaosConfig, run_chaos

__all__ = ["ChaosConfig", "run_chaos"]
