"""`python -m sitegen`: the `sitegen` command."""

from sitegen.cli import run

if __name__ == "__main__":
    run()
