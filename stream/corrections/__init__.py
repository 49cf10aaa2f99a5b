"""Corrections of the past: voided matches, adjusted ratings, erased players
(docs/operations.md#correcting-the-past)."""
