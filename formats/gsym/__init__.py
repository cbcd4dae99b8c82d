"""GSYM symbolication files (LLVM version 1): reader with inline lookups."""
