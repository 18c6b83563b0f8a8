"""Test helpers: put the package on the path and expose the fakes.

``python3 -m unittest discover -s sdk/python/tests`` imports test modules
from this folder, so the package directory ``sdk/python`` is added here.
"""

import os
import sys

SDK_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REPO_ROOT = os.path.dirname(os.path.dirname(SDK_ROOT))
if SDK_ROOT not in sys.path:
    sys.path.insert(0, SDK_ROOT)
