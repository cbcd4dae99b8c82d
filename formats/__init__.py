"""File-format codecs: decode and encode bytes, nothing else.

Each subpackage handles one format (``fxt``, ``gsym``, ``dwarf``, ``elf``, ``sframe``, ``symbfile``,
``markup``); what several share is at the top: :mod:`~fxscope.formats.errors` (``FormatError``, the one error
type for unreadable input), :mod:`~fxscope.formats.leb128` (the one LEB128/varint reader and writer, with
its bound rule) and :mod:`~fxscope.formats.gc_pause`. Nothing here imports ``core`` or ``app``, nor Qt: a
format module must be usable from a script.
"""
