"""SFrame stack-trace sections: decoder, lookups, objdump-compatible dump."""
