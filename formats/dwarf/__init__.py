"""DWARF debug information decoded into a function/line/inline model: a hand-written decoder for DWARF 4/5
executables and shared libraries, with pyelftools as the fallback and the reference."""
