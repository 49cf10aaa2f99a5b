"""The live pipeline: match and player processors (pure logic) and their Faust wiring."""
