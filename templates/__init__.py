"""The site's jinja templates and static assets: shipped as package data (`sitegen.templates`),
so that an installed wheel builds a site without the repository beside it."""
