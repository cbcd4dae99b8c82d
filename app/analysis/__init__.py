"""The window's analysis views: flame graph / bottom-up / butterfly of a selection, per-name statistics with
a duration histogram, computed off the UI thread by core/analysis."""
