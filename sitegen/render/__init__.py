"""The site model to bytes: the jinja environment, assets, and the render workers."""
