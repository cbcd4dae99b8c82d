"""Timeline views over core.trace.model: track items, the timeline widget, the details panel."""
