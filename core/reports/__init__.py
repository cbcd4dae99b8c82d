"""Crash reports as objects: a log (a file, or a trace's log records per process) split into reports."""
