"""pipesim.schedules and pipesim.export against the command, and an exported schedule run back as csv:PATH."""

import unittest

import pipesim
from support import TempDirTest, cli, cli_error, uniform_scenario


class SchedulesTest(unittest.TestCase):
    def test_names_and_descriptions_are_the_commands(self):
        status, out, err = cli("schedules")
        self.assertEqual(status, 0, err)
        listed = pipesim.schedules()
        self.assertGreater(len(listed), 0)
        # The command's table: a header, a rule, one row a schedule (name, then its description).
        for info in listed:
            self.assertTrue(any(line.split()[:1] == [info["name"]] and info["description"] in line
                                for line in out.splitlines()), info["name"])
        by_name = {info["name"]: info for info in listed}
        self.assertEqual(len(by_name), len(listed))
        # What the schedules are by definition: GPipe and 1F1B are static lists with a fused backward, Zero
        # Bubble splits it, PACI and PipeDream decide at run time and never flush.
        self.assertTrue(by_name["gpipe"]["exportable"])
        self.assertFalse(by_name["gpipe"]["splits_backward"])
        self.assertTrue(by_name["zb-h1"]["splits_backward"])
        self.assertFalse(by_name["paci"]["exportable"])
        self.assertEqual(by_name["pipedream"]["default_sync"], by_name["paci"]["default_sync"])
        self.assertNotEqual(by_name["pipedream"]["default_sync"], by_name["1f1b-flush"]["default_sync"])
        # The JSON record's tokens, as the docstring says, never the table's "none (async)".
        self.assertEqual(by_name["pipedream"]["default_sync"], "none")
        self.assertEqual(by_name["1f1b-flush"]["default_sync"], "barrier")


class ExportTest(TempDirTest):
    def test_text_equals_the_commands(self):
        status, out, err = cli("export", "zb-h1", "--stages", "4", "--microbatches", "6", "--costs", "1,1,1")
        self.assertEqual(status, 0, err)
        self.assertEqual(pipesim.export("zb-h1", stages=4, microbatches=6, costs=(1, 1, 1)), out)
        path = self.path("zb.csv")
        text = pipesim.export("zb-h1", stages=4, microbatches=6, path=path)
        with open(path, encoding="utf-8") as file:
            self.assertEqual(file.read(), text)

    def test_round_trip_runs_the_same_schedule(self):
        # 1F1B-flush written out and read back as csv:PATH is the same schedule: the same figures.
        path = self.path("1f1b.csv")
        pipesim.export("1f1b-flush", stages=4, microbatches=8, costs="1,2", path=path)
        native, exported = pipesim.run(uniform_scenario(4, 8, 1.0, 2.0, schedules=["1f1b-flush", f"csv:{path}"]))
        self.assertAlmostEqual(exported["metrics"]["period_ms"], (8 + 3) * 3.0, places=6)
        for key in ("period_ms", "makespan_ms", "bubble_fraction", "peak_activation_bytes", "simulated_ops"):
            self.assertEqual(exported["metrics"][key], native["metrics"][key], key)

    def test_run_time_schedule_raises_the_commands_message(self):
        with self.assertRaises(pipesim.InputError) as caught:
            pipesim.export("paci")
        self.assertEqual(str(caught.exception), cli_error("export", "paci"))

    def test_out_of_range_options_raise(self):
        for kwargs in ({"stages": 0}, {"microbatches": -1}, {"chunks": 5000}, {"costs": "1"},
                       {"comm_ms": "nan"}):
            with self.subTest(**kwargs), self.assertRaises(pipesim.InputError):
                pipesim.export("gpipe", **kwargs)


if __name__ == "__main__":
    unittest.main()
