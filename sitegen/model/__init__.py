"""The resource model: pydantic classes per kind, canonical digests, and problems."""
