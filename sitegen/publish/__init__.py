"""Bytes to the output: staged writes, incremental state, the manifest and what a build changes."""
