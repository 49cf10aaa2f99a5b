"""One module per kind of correction: its record, how its JSON reads and writes, and what it
says of itself (stream/corrections/records.py registers them)."""
