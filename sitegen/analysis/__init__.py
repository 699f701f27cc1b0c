"""What the pages compare: kernels, passes, series and rankings; data in, data out, no HTML."""
