"""The report: building it, the inventory, redaction, the decisions memo, tickets compared."""
