"""What every command's exit status means."""

EXIT_OK = 0
EXIT_CONTENT = 1  # the content (or a base it was compared with) has problems
EXIT_USAGE = 2  # the command line, an option's value or the environment is wrong
