"""Upstream sources as plugins (registry.py): each importer turns a source's files into content
and tells the site what only it knows about that content. Nothing outside this package names a
source."""
