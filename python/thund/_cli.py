"""The `thund` console script of the Python package: runs the bundled binary."""

import os
import sys

from thund import _binary_env, binary


def main() -> None:
    exe = binary()
    os.execve(exe, [exe, *sys.argv[1:]], _binary_env())


if __name__ == "__main__":
    main()
