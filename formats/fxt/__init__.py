"""Fuchsia trace format (FXT): a vectorized reader into :class:`~fxscope.formats.fxt.columns.FxtColumns` and a writer."""
