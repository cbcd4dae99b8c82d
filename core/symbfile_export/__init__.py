"""Symbfile export: ranges and return pads from an ELF, FileIDs, and upload to a symbolization service."""
