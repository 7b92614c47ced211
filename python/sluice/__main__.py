"""``python -m sluice ...`` is the ``sluice`` command."""
import os
import shutil
import sys


def main() -> None:
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "sluice")
    command = here if os.access(here, os.X_OK) else shutil.which("sluice")
    if command is None:
        sys.exit("sluice: the sluice command is not installed beside this package")
    os.execv(command, [command] + sys.argv[1:])


if __name__ == "__main__":
    main()
