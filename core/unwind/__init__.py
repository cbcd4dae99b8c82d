"""Stack unwinding from SFrame rules."""
