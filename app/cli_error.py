"""The error a command reports to the user: a leaf module, so that the commands and the GUI entry point
(which ``app/cli.py`` itself calls) raise it without importing the command line."""

from __future__ import annotations


class CliError(Exception):
    """A problem the user can fix (bad argument, unreadable file): printed as one line, exit 2."""
