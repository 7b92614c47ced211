"""``python -m sluice ...`` is the ``sluice`` command; pipelines whose files list Python libraries
run here (sluice.pipelines)."""
import os
import shutil
import sys


def main() -> None:
    arguments = sys.argv[1:]
    if len(arguments) >= 2 and arguments[0] in ("run", "validate"):
        from . import pipelines

        if pipelines.runs_in_python(arguments[1]):
            # A pipeline declaring Python runs here (sluice run hands it over).
            sys.exit(pipelines.main(arguments))
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "sluice")
    command = here if os.access(here, os.X_OK) else shutil.which("sluice")
    if command is None:
        sys.exit("sluice: the sluice command is not installed beside this package")
    os.execv(command, [command] + sys.argv[1:])


if __name__ == "__main__":
    main()
