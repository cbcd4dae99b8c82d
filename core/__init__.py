"""The model: trace model, symbolization engine, symbol stores, queries. No Qt here."""
