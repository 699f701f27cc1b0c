"""`sitegen` and `python -m sitegen`: the command (cli.py), imported without the collector.

Importing the stages builds the pydantic models and the pages' record classes: tens of
thousands of objects that live as long as the process and hold no garbage cycles. With the
default thresholds the collector walked them ~65 times on the way (~25 ms of CPU of a ~0.25 s
start, while the other CPU idles); it runs as before once the import is done.
"""

import gc


def run() -> None:
    thresholds = gc.get_threshold()
    gc.set_threshold(0)  # no automatic collection
    try:
        from sitegen import cli
    finally:
        gc.set_threshold(*thresholds)
    cli.run()


if __name__ == "__main__":
    run()
