"""`sitegen serve`: the development server; every rebuild goes through the pipeline."""
