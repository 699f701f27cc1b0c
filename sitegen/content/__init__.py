"""Content in: walk the tree, parse strictly, validate, resolve into a catalog."""
