"""The conformance suite and its plain-loop references."""
