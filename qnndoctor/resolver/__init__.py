"""The resolver: which release fits, its commands, what to change when nothing fits, what-if."""
