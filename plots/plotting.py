"""Shared by the plot scripts: a headless matplotlib and one way to title and save a figure."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402,F401  (re-exported for the scripts)


def save(fig, path, title="", top=1.0):
    """Titles the figure (when a title is given), lays it out below `top` and writes it at 150 dpi."""
    if title:
        fig.suptitle(title, fontsize=11)
    fig.tight_layout(rect=(0, 0, 1, top))
    fig.savefig(path, dpi=150)
