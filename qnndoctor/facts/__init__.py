"""The facts the probes found, SoC identification and library kinds."""
