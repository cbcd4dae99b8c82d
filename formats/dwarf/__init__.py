"""DWARF debug information (via pyelftools) decoded into a function/line/inline model."""
