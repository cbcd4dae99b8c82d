"""File-format codecs: decode and encode bytes, nothing else.

Each subpackage handles one format (``fxt``, ``gsym``, ``elf``, ``sframe``, ``symbfile``, ``markup``).
Nothing here imports ``core`` or ``app``, nor Qt: a format module must be usable from a script.
"""
