"""A chart's two files: the SVG is laid out as the PNG is, by the layout the PNG's drawing found, and
the same chart drawn again gives the same bytes."""

from __future__ import annotations

import re

import pytest
from matplotlib.figure import Figure

from madeval.leaderboard.charts import _save


def test_the_svg_keeps_the_constrained_layout_the_png_found(tmp_path):
    figure = Figure(figsize=(4.0, 3.0), layout="constrained")
    axes = figure.subplots()
    axes.set_title("score per configuration")
    axes.set_ylabel("a long label that needs room on the left")
    _save(figure, tmp_path, "chart")

    x0, y0, x1, y1 = axes.get_position().extents  # after the PNG was drawn, in figure fractions
    assert (x0, y0) != pytest.approx((0.125, 0.11), abs=0.01)  # constrained layout moved the axes from the default
    assert figure.get_layout_engine() is None  # the SVG was drawn without laying out again
    svg = (tmp_path / "chart.svg").read_text()
    patch = re.search(r'<g id="axes_1">\s*<g id="patch_2">\s*<path d="([^"]+)"', svg).group(1)
    xs, ys = zip(*((float(x), float(y)) for x, y in re.findall(r"([\d.]+) ([\d.]+)", patch)))
    width, height = 4.0 * 72, 3.0 * 72  # points; SVG's y runs down
    assert (min(xs), max(xs)) == pytest.approx((x0 * width, x1 * width), abs=0.01)
    assert (min(ys), max(ys)) == pytest.approx(((1 - y1) * height, (1 - y0) * height), abs=0.01)
    assert (tmp_path / "chart.png").read_bytes().startswith(b"\x89PNG")


def test_the_same_chart_drawn_twice_gives_the_same_files(tmp_path):
    """No drawing date or random id in either file: a board kept in git (a CI regression board) changes
    only where the results do."""
    for folder in ("first", "second"):
        (tmp_path / folder).mkdir()
        figure = Figure(figsize=(4.0, 3.0), layout="constrained")
        axes = figure.subplots()
        axes.barh(["single", "debate"], [0.4, 0.6])
        axes.set_title("score per configuration")
        _save(figure, tmp_path / folder, "chart")
    for name in ("chart.png", "chart.svg"):
        assert (tmp_path / "first" / name).read_bytes() == (tmp_path / "second" / name).read_bytes(), name
