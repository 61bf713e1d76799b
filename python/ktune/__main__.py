"""`python -m ktune ...` and the `ktune` console script: the ktune command
line itself (the C program, every subcommand), not a Python copy of it.

The program is the one `pip install ./python` built into the package
(beside libktune.so and ktune-tuner), else the one beside the library the
installation was pointed at (KTUNE_LIBRARY's build folder, PREFIX/bin/ktune),
else $KTUNE_COMMAND. It replaces this process (exec), so its exit status and
signals are the command's own.
"""

from __future__ import annotations

import os
import sys
from typing import List, Optional


def command_path() -> Optional[str]:
    """The ktune program this package runs, or None when it has none."""
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ktune")
    candidates = [here]
    try:
        from ._built import COMMAND  # written by setup.py
        candidates.append(COMMAND)
    except ImportError:
        pass
    candidates.append(os.environ.get("KTUNE_COMMAND"))
    for path in candidates:
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def main(argv: Optional[List[str]] = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    path = command_path()
    if path is None:
        sys.stderr.write("ktune: error: this installation of the Python package has no ktune program (it was "
                         "installed against a library without one beside it); set KTUNE_COMMAND=/path/to/ktune\n")
        sys.exit(2)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(path, ["ktune"] + list(args))


if __name__ == "__main__":
    main()
