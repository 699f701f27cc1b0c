"""The machine that measured, described as an ExecutionEnvironment (`sitegen environment`).

record.py runs the tools and keeps what they printed; nvidia_smi.py and python_probe.py read
those outputs; environment.py makes the resource. Standard library only: it runs on a GPU
machine that has only the benchmark's Python, without sitegen's dependencies.
"""
