"""The command line: argument parsing, each subcommand's front door, installer mode."""
