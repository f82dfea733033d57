"""Shared by the Python tests: the repository, the pipesim command and a scenario with closed-form figures."""

import os
import subprocess
import tempfile
import unittest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
# ctest sets PIPESIM_BINARY to the command built beside the module.
PIPESIM = os.environ.get("PIPESIM_BINARY", os.path.join(REPO, "build", "pipesim"))
DEFAULT_SCENARIO = os.path.join(REPO, "share", "scenarios", "default.yaml")
ERROR_PREFIX = "pipesim: error: "


def cli(*args):
    """Runs the pipesim command; returns (exit status, stdout, stderr)."""
    done = subprocess.run([PIPESIM, *args], capture_output=True, text=True, check=False)
    return done.returncode, done.stdout, done.stderr


def cli_error(*args):
    """The message the command prints for a failure, without its "pipesim: error: " prefix."""
    status, _, err = cli(*args)
    assert status != 0, f"pipesim {' '.join(args)} succeeded"
    line = err.strip().splitlines()[-1]
    assert line.startswith(ERROR_PREFIX), err
    return line[len(ERROR_PREFIX):]


def uniform_scenario(stages, microbatches, forward_ms, backward_ms, schedules=("1f1b-flush",)):
    """N devices of equal costs, free comm, a free optimizer step, a barrier between batches: 1F1B-flush and
    GPipe then take (m + N - 1)(F + B) per batch (N - 1 fill and drain slots of F + B around m), a bubble
    of (N - 1)/(m + N - 1) of each device's time."""
    return {
        "name": "uniform",
        "pipeline": {"stages": stages, "microbatches": microbatches},
        "costs": {"forward_ms": forward_ms, "backward_ms": backward_ms},
        "optimizer": {"sync": "barrier"},
        "schedules": list(schedules),
    }


class TempDirTest(unittest.TestCase):
    """A test case with a temporary directory, self.tmp, removed afterwards."""

    def setUp(self):
        self._dir = tempfile.TemporaryDirectory(prefix="pipesim-test-")
        self.tmp = self._dir.name

    def tearDown(self):
        self._dir.cleanup()

    def path(self, name):
        return os.path.join(self.tmp, name)
