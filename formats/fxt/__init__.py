"""Fuchsia trace format (FXT): a vectorized reader into :class:`~formats.fxt.columns.FxtColumns` and a writer."""
