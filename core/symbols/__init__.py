"""Symbol discovery: binaries, debug files and GSYM files by build ID, locally and from debuginfod."""
