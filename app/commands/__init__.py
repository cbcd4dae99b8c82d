"""One module per ``fxscope`` subcommand; each exposes ``register(subparsers)``."""
