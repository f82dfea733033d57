"""pipesim.sweep: the command's sweep CSV, row for row, and closed-form figures over the product."""

import csv
import json
import unittest

import pipesim
from support import TempDirTest, cli, uniform_scenario


def typed(cell):
    """What a CSV cell should become in Python, by the rules sweep() documents, decided independently."""
    if cell == "":
        return None
    if cell in ("true", "false"):
        return cell == "true"
    try:
        return int(cell)
    except ValueError:
        pass
    try:
        return float(cell)
    except ValueError:
        return cell


class SweepTest(TempDirTest):
    def write_scenario(self, scenario):
        path = self.path("scenario.yaml")
        with open(path, "w", encoding="utf-8") as file:
            json.dump(scenario, file)
        return path

    def cli_rows(self, *args):
        out = self.path("sweep.csv")
        status, _, err = cli("sweep", *args, "--out", out, "--quiet")
        with open(out, encoding="utf-8", newline="") as file:
            return status, err, [{key: typed(value) for key, value in row.items()} for row in csv.DictReader(file)]

    def test_rows_equal_the_commands_csv(self):
        scenario = uniform_scenario(4, 8, 1.0, 2.0, schedules=["gpipe", "1f1b-flush", "zb-h1"])
        # zb-1p needs I and W apart and M_W stated.
        scenario["costs"] = {"forward_ms": 1, "backward_input_ms": 1, "backward_weight_ms": 1,
                             "weight_grad_activation_bytes": 0}
        path = self.write_scenario(scenario)
        rows = pipesim.sweep(path, stages=[2, 4], microbatches="4:8:x2", schedules="1f1b-flush,zb-1p",
                             param={"memory_limit": [1, 1.5]}, set={"costs.comm_ms": 0.5}, jobs=2)
        status, err, expected = self.cli_rows(path, "--stages", "2,4", "--microbatches", "4:8:x2", "--schedules",
                                              "1f1b-flush,zb-1p", "--param", "memory_limit=1,1.5", "--set",
                                              "costs.comm_ms=0.5", "-j", "2")
        # 1F1B-flush takes no memory_limit: the parameter applies to zb-1p only (2 x 2 runs of 1F1B-flush, and
        # 2 x 2 x 2 of zb-1p), and every run succeeds in both.
        self.assertEqual(status, 0, err)
        self.assertEqual(rows, expected)
        self.assertEqual(len(rows), 2 * 2 + 2 * 2 * 2)
        self.assertTrue(all(r["error"] is None for r in rows))
        self.assertTrue(all(r["memory_limit"] is None for r in rows if r["schedule_name"] == "1f1b-flush"))

    def test_dict_product_closed_form(self):
        # Every (N, m) of 1F1B-flush at uniform costs: (m + N - 1)(F + B) per batch, in the product's order.
        rows = pipesim.sweep(uniform_scenario(4, 8, 1.0, 2.0), stages=[2, 3], microbatches=[4, 6])
        self.assertEqual([(r["devices"], r["microbatches"]) for r in rows], [(2, 4), (2, 6), (3, 4), (3, 6)])
        for row in rows:
            n, m = row["devices"], row["microbatches"]
            self.assertIsNone(row["error"])
            self.assertAlmostEqual(row["period_ms"], (m + n - 1) * 3.0, places=3)

    def test_a_bad_list_raises_the_commands_message(self):
        path = self.write_scenario(uniform_scenario(4, 8, 1.0, 2.0))
        with self.assertRaises(pipesim.InputError) as caught:
            pipesim.sweep(path, stages="0,2")
        status, _, err = cli("sweep", path, "--stages", "0,2", "--out", self.path("x.csv"))
        self.assertNotEqual(status, 0)
        self.assertEqual("pipesim: error: " + str(caught.exception), err.strip())


if __name__ == "__main__":
    unittest.main()
