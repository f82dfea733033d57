"""Failures raise pipesim.Error/InputError with the command's located message; bad values never crash."""

import os
import subprocess
import sys
import textwrap
import unittest

import pipesim
from support import TempDirTest, cli_error, uniform_scenario


class ErrorTest(TempDirTest):
    def test_exception_classes(self):
        self.assertTrue(issubclass(pipesim.Error, Exception))
        self.assertTrue(issubclass(pipesim.InputError, pipesim.Error))
        self.assertEqual(pipesim.InputError.__module__, "pipesim")
        self.assertRegex(pipesim.__version__, r"^[0-9]+\.[0-9]+\.[0-9]+$")

    def test_bad_key_in_a_file_gives_the_commands_message(self):
        path = self.path("bad.yaml")
        with open(path, "w", encoding="utf-8") as file:
            file.write("pipeline:\n  stages: 4\n  microbatches: 8\n  stagez: 2\ncosts: {forward_ms: 1, backward_ms: 2}\n")
        with self.assertRaises(pipesim.InputError) as caught:
            pipesim.run(path)
        message = str(caught.exception)
        self.assertEqual(message, cli_error("run", path))
        self.assertTrue(message.startswith(f"{path}:4:"), message)
        self.assertIn("stagez", message)

    def test_bad_key_in_a_dict_names_the_key_and_line(self):
        scenario = uniform_scenario(4, 8, 1.0, 2.0)
        scenario["pipeline"]["stagez"] = 2
        with self.assertRaises(pipesim.InputError) as caught:
            pipesim.run(scenario)
        message = str(caught.exception)
        self.assertRegex(message, r"^<dict>:[0-9]+: ")
        self.assertIn("pipeline.stagez", message)
        # The line is the key's line in the JSON text the dict was written as (one key a line).
        line = int(message.split(":")[1])
        self.assertIn('"stagez"', pipesim._scenario_text(scenario).splitlines()[line - 1])

    def test_missing_file_gives_the_commands_message(self):
        path = self.path("missing.yaml")
        with self.assertRaises(pipesim.InputError) as caught:
            pipesim.run(path)
        self.assertEqual(str(caught.exception), cli_error("run", path))
        self.assertIn(path, str(caught.exception))

    def test_unknown_schedule_and_bad_parameter(self):
        scenario = uniform_scenario(4, 8, 1.0, 2.0)
        with self.assertRaisesRegex(pipesim.InputError, "unknown schedule 'nope'"):
            pipesim.run(scenario, schedules="nope")
        with self.assertRaisesRegex(pipesim.InputError, "parameter 'chunks'"):
            pipesim.run(scenario, schedules="interleaved-1f1b:chunks=x")

    def test_bad_values_raise(self):
        for key, value in [("stages", 0), ("stages", -3), ("stages", "four"), ("stages", [1, 2]),
                           ("microbatches", 10**30), ("microbatches", float("nan")), ("stages", 1e9)]:
            scenario = uniform_scenario(4, 8, 1.0, 2.0)
            scenario["pipeline"][key] = value
            with self.subTest(key=key, value=value), self.assertRaises(pipesim.InputError):
                pipesim.run(scenario)
        with self.assertRaises(pipesim.InputError):
            pipesim.run({"pipeline": {"stages": 2, "microbatches": 2}, "costs": {"forward_ms": object()}})
        with self.assertRaises(pipesim.InputError):
            pipesim.set_max_memory_gb(0)
        with self.assertRaises(TypeError):
            pipesim.run(42)

    def test_bad_values_leave_the_interpreter_running(self):
        # In a child interpreter, so that a crash fails this test instead of ending the test run.
        script = textwrap.dedent("""
            import pipesim
            bad = [{"pipeline": {"stages": 2**31, "microbatches": 8}, "costs": {"forward_ms": 1, "backward_ms": 1}},
                   {"pipeline": {"stages": 4096, "microbatches": 1048576},
                    "costs": {"forward_ms": 1, "backward_ms": 1}},
                   {"pipeline": {"stages": 2, "microbatches": 2}, "costs": {"forward_ms": -1, "backward_ms": 1e300}},
                   {"pipeline": None}, {"schedules": {"a": 1}}, [], "", "/"]
            for scenario in bad:
                try:
                    pipesim.run(scenario)
                except (pipesim.Error, TypeError) as e:
                    pass
            for kwargs in ({"stages": 2**40}, {"microbatches": 0}, {"costs": "1e400,1"}):
                try:
                    pipesim.export("1f1b-flush", **kwargs)
                except (pipesim.Error, OverflowError, TypeError):
                    pass
            print("alive")
        """)
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=os.environ,
                              timeout=120, check=False)
        self.assertEqual((done.returncode, done.stdout.strip()), (0, "alive"), done.stderr)

    def test_bad_arguments_and_paths_raise_pipesims_errors(self):
        # int(), float() and open() once raised bare ValueError and IsADirectoryError here.
        for kwargs in ({"stages": "four"}, {"microbatches": 2.5}, {"chunks": "x"}, {"stages": None}):
            with self.subTest(**kwargs), self.assertRaises(pipesim.InputError) as caught:
                pipesim.export("gpipe", **kwargs)
            self.assertIn(next(iter(kwargs)), str(caught.exception))
        with self.assertRaises(pipesim.InputError) as caught:
            pipesim.export("gpipe", path=self.tmp)
        self.assertEqual(str(caught.exception), f"{self.tmp}: is a directory, not an output file")
        with self.assertRaisesRegex(pipesim.InputError, "^gb: expected a number"):
            pipesim.set_max_memory_gb("lots")
        with self.assertRaisesRegex(pipesim.InputError, "^jobs: expected an integer"):
            pipesim.sweep(uniform_scenario(2, 4, 1.0, 2.0), jobs="all")

    def test_messages_are_bounded(self):
        # A schedule list of 100,000 items once gave a 200,000-character message; the command bounds it.
        with self.assertRaises(pipesim.InputError) as raised:
            pipesim.run(schedules="x" * 200000)
        self.assertLess(len(str(raised.exception)), 2100)

    def test_docstrings(self):
        for function in (pipesim.run, pipesim.sweep, pipesim.schedules, pipesim.export,
                         pipesim.set_max_memory_gb, pipesim.max_memory_gb):
            self.assertGreater(len(function.__doc__ or ""), 40, function.__name__)
        self.assertIn("scenario", pipesim.run.__doc__)


if __name__ == "__main__":
    unittest.main()
