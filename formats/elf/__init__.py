"""ELF files through pyelftools: build ID, segments, symbols, debuglink, sections."""
