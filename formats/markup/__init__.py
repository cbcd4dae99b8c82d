"""Symbolizer markup (``{{{...}}}`` log elements): parser and field syntax."""
