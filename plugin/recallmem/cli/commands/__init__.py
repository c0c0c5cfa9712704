"""The ``recallmem`` subcommands, one module per group."""
