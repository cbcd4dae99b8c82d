"""The trace model built from the FXT reader columns: slices, tracks, queries. No Qt."""
