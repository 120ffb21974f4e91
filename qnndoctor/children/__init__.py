"""Running children safely: the injectable runner, process-tree containment, launch settings."""
