#!/usr/bin/python3
"""The plot scripts (ctest: plots): every plots/*.py script and make_readme_images.sh answer --help,
best_schedule_heatmap.py picks the best schedule per (N, m) with its margin and masks the cells where nothing fits or
everything failed, and bubble_vs_m.py and throughput_vs_m.py wrap their per-N panels into a grid. Skips (exit 77,
ctest's SKIP_RETURN_CODE) when this interpreter has no matplotlib: the scripts need Debian's /usr/bin/python3 with
python3-matplotlib.

Usage: /usr/bin/python3 tests/plots_test.py [unittest options]
"""
import csv
import glob
import importlib.util
import os
import subprocess
import sys
import tempfile
import unittest

PLOTS = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "plots"))
SKIP = 77
HAVE_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None
# No __pycache__ in the source tree's plots/, from the imports here or the scripts run.
sys.dont_write_bytecode = True
ENV = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
sys.path.insert(0, PLOTS)

# Everything sweep writes that the scripts read; the other columns do not matter to them.
COLUMNS = ["schedule_name", "label", "sync", "devices", "microbatches", "throughput_samples_per_s",
           "throughput_tokens_per_s", "bubble_fraction", "bubble_rate_zb", "fits", "error"]


def row(schedule, n, m, throughput, fits="true", error="", sync="barrier"):
    bubble = (n - 1) / (m + n - 1)
    return {"schedule_name": schedule, "label": schedule, "sync": "" if error else sync, "devices": str(n),
            "microbatches": str(m), "throughput_samples_per_s": "" if error else str(throughput),
            "throughput_tokens_per_s": "" if error else str(throughput * 4096),
            "bubble_fraction": "" if error else str(bubble), "bubble_rate_zb": "" if error else str(bubble),
            "fits": "" if error else fits, "error": error}


def write_csv(path, rows, columns=COLUMNS):
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return path


def heatmap_rows():
    """4 N x 3 m x 2 schedules: zb-v 10 % faster than 1f1b-flush, except where zb-v does not fit (1f1b-flush
    alone), fits is unknown (empty: counts as fitting), nothing fits (N=8, m=4) and both failed (N=16, m=16)."""
    rows = []
    for n in (2, 4, 8, 16):
        for m in (4, 8, 16):
            flush, zbv = {}, {}
            if (n, m) == (4, 8):
                zbv = {"fits": "false"}
            if (n, m) == (2, 16):
                zbv = {"fits": ""}
            if (n, m) == (8, 4):
                flush = zbv = {"fits": "false"}
            if (n, m) == (16, 16):
                flush = {"error": "1f1b-flush: something went wrong"}
                zbv = {"error": "zb-v: needs more microbatches"}
            rows.append(row("1f1b-flush", n, m, 100.0 * n, **flush))
            rows.append(row("zb-v", n, m, 110.0 * n, **zbv))
    return rows


def run_script(name, *args):
    return subprocess.run([sys.executable, os.path.join(PLOTS, name), *args], capture_output=True, text=True,
                          env=ENV)


@unittest.skipUnless(HAVE_MATPLOTLIB, "no matplotlib in this interpreter")
class HelpTest(unittest.TestCase):
    def test_every_script_answers_help(self):
        scripts = sorted(p for p in glob.glob(os.path.join(PLOTS, "*.py")) if not p.endswith("plotting.py"))
        self.assertIn(os.path.join(PLOTS, "best_schedule_heatmap.py"), scripts)
        for path in scripts:
            with self.subTest(script=os.path.basename(path)):
                done = subprocess.run([sys.executable, path, "--help"], capture_output=True, text=True, env=ENV)
                self.assertEqual(done.returncode, 0, done.stderr)
                self.assertIn("usage:", done.stdout)

    def test_make_readme_images_answers_help(self):
        done = subprocess.run(["bash", os.path.join(PLOTS, "make_readme_images.sh"), "--help"], capture_output=True,
                              text=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("usage:", done.stdout)


@unittest.skipUnless(HAVE_MATPLOTLIB, "no matplotlib in this interpreter")
class BestScheduleHeatmapTest(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.TemporaryDirectory()
        self.addCleanup(self.work.cleanup)

    def test_best_per_cell(self):
        import best_schedule_heatmap as heatmap
        best = heatmap.best_per_cell(heatmap_rows(), "throughput_samples_per_s")
        self.assertEqual(len(best), 12)
        self.assertEqual(best[(2, 4)].schedule, "zb-v")
        self.assertAlmostEqual(best[(2, 4)].margin, 10.0)
        self.assertEqual(best[(2, 16)].schedule, "zb-v")  # fits unknown counts as fitting
        self.assertEqual(best[(4, 8)], heatmap.Best("1f1b-flush", None, None))  # the only one that fits
        self.assertEqual(best[(8, 4)], heatmap.Best(None, None, heatmap.NONE_FITS))
        self.assertEqual(best[(16, 16)], heatmap.Best(None, None, heatmap.FAILED))

    def test_a_failed_run_leaves_the_others(self):
        import best_schedule_heatmap as heatmap
        rows = [row("1f1b-flush", 4, 8, 100.0), row("zb-v", 4, 8, 0, error="no"), row("zb-h1", 4, 8, 125.0),
                row("zb-h1", 4, 8, 120.0)]
        best = heatmap.best_per_cell(rows, "throughput_samples_per_s")[(4, 8)]
        self.assertEqual(best.schedule, "zb-h1")
        self.assertAlmostEqual(best.margin, 25.0)  # over 1f1b-flush, not over zb-h1's other run

    def test_sync_only_drops_asynchronous_schedules(self):
        import best_schedule_heatmap as heatmap
        path = write_csv(os.path.join(self.work.name, "s.csv"),
                         [row("1f1b-flush", 4, 8, 100.0), row("paci", 4, 8, 150.0, sync="none")])
        self.assertEqual(len(heatmap.read_rows(path, "throughput_samples_per_s")), 2)
        rows = heatmap.read_rows(path, "throughput_samples_per_s", sync_only=True)
        self.assertEqual([r["label"] for r in rows], ["1f1b-flush"])

    def test_draws_the_sweep(self):
        sweep = write_csv(os.path.join(self.work.name, "sweep.csv"), heatmap_rows())
        for extra in ([], ["--metric", "throughput_tokens_per_s", "--sync-only", "--title", "t"]):
            png = os.path.join(self.work.name, "heatmap.png")
            done = run_script("best_schedule_heatmap.py", sweep, "-o", png, *extra)
            self.assertEqual(done.returncode, 0, done.stderr)
            with open(png, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
            os.remove(png)

    def test_names_the_missing_column(self):
        sweep = write_csv(os.path.join(self.work.name, "old.csv"), heatmap_rows(),
                          [c for c in COLUMNS if c != "fits"])
        done = run_script("best_schedule_heatmap.py", sweep, "-o", os.path.join(self.work.name, "x.png"))
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("old.csv", done.stderr)
        self.assertIn("'fits'", done.stderr)


@unittest.skipUnless(HAVE_MATPLOTLIB, "no matplotlib in this interpreter")
class GridTest(unittest.TestCase):
    """Seven values of N give three rows of at most three panels, the last two axes hidden."""
    STAGES = (2, 3, 4, 5, 6, 7, 8)

    def check_grid(self, fig):
        visible = [ax for ax in fig.axes if ax.get_visible()]
        self.assertEqual(len(visible), len(self.STAGES))
        self.assertEqual(len(fig.axes), 9)
        self.assertEqual(fig.axes[0].get_subplotspec().get_gridspec().get_geometry(), (3, 3))
        self.assertEqual([ax.get_title() for ax in visible], [f"N = {n}" for n in self.STAGES])
        # x labels under each column's lowest panel (N = 6 and 7 sit above hidden axes), y labels on the left.
        self.assertEqual([bool(ax.get_xlabel()) for ax in visible], [False] * 4 + [True] * 3)
        self.assertEqual([bool(ax.get_ylabel()) for ax in visible], [i % 3 == 0 for i in range(7)])

    def test_bubble_vs_m(self):
        import bubble_vs_m
        rows = [row(s, n, m, 1.0) for s in ("gpipe", "zb-h1") for n in self.STAGES for m in (4, 8, 16)]
        self.check_grid(bubble_vs_m.build_figure(rows, "bubble_fraction"))
        with tempfile.TemporaryDirectory() as work:
            sweep = write_csv(os.path.join(work, "sweep.csv"), rows)
            png = os.path.join(work, "bubble.png")
            done = run_script("bubble_vs_m.py", sweep, "-o", png)
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertGreater(os.path.getsize(png), 0)

    def test_throughput_vs_m(self):
        import throughput_vs_m
        rows = [row(s, n, m, 100.0 * m / (m + n - 1) if s == "1f1b-flush" else 100.0)
                for s in ("1f1b-flush", "paci") for n in self.STAGES for m in (1, 4, 16)]
        self.check_grid(throughput_vs_m.build_figure(rows, "1f1b-flush", "paci"))


if __name__ == "__main__":
    if not HAVE_MATPLOTLIB:
        print(f"skipped: {sys.executable} has no matplotlib (Debian's python3-matplotlib)")
        sys.exit(SKIP)
    unittest.main()
