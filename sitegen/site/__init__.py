"""The site model: URLs, and every page's typed context and JSON twin, one module per page kind."""
