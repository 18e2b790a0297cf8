"""The ``profkit`` command: the Rust CLI, run in this process (``python -m profkit ...``)."""

import sys


def main() -> None:
    """Runs the ``profkit`` command with ``sys.argv`` and exits with its code."""
    from profkit import _native

    argv = ["profkit", *sys.argv[1:]]
    sys.stdout.flush()
    # `plugin check` runs each check in a child of the command: this interpreter, as `-m profkit`.
    sys.exit(_native.run_cli(argv, [sys.executable, "-m", "profkit"]))


if __name__ == "__main__":
    main()
