"""Shared by the plot scripts: a headless matplotlib, a grid of panels that wraps, and one way to title and save a
figure."""
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (re-exported for the scripts)


def panel_grid(count, xlabel, ylabel, panel_size=(5.2, 4.2), max_columns=3, sharey=False):
    """A figure of `count` panels in rows of at most `max_columns` (one row of many panels is unreadable), the unused
    axes of the last row hidden. The x label goes under the lowest panel of each column, the y label left of each
    row. Returns the figure and the panels in reading order."""
    columns = max(1, min(count, max_columns))
    rows = math.ceil(count / columns)
    fig, axes = plt.subplots(rows, columns, figsize=(panel_size[0] * columns, panel_size[1] * rows), squeeze=False,
                             sharey=sharey)
    panels = list(axes.flat)
    for ax in panels[count:]:
        ax.set_visible(False)
    for i, ax in enumerate(panels[:count]):
        if i + columns >= count:
            ax.set_xlabel(xlabel)
        if i % columns == 0:
            ax.set_ylabel(ylabel)
    return fig, panels[:count]


def save(fig, path, title="", top=1.0):
    """Titles the figure (when a title is given), lays it out below `top` and writes it at 150 dpi."""
    if title:
        fig.suptitle(title, fontsize=11)
    fig.tight_layout(rect=(0, 0, 1, top))
    fig.savefig(path, dpi=150)
