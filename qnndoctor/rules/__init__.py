"""Rules: pure functions from facts to findings (``registry`` runs them; one module per topic)."""
