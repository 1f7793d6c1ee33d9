"""One bounded YAML reader for every YAML file madeval reads (issue 33, item 10): a price file, a
config file, a task file and lm-eval's task files share its bounds on size, nodes (aliases counted
at every use) and depth, and every problem is one line and exit status 2.

Before: the price file was read with ``yaml.safe_load`` (a 0.4 KB alias bomb grew to 4.2 GB), a
deep list ended in a RecursionError traceback, a long integer in an OverflowError traceback, and a
price of 1e308 was printed as "$inf"."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import madeval
from madeval.errors import UsageError
from madeval.pricing.table import MAX_PRICE, read_price_table

#: 10 values, then 8 levels of 10 aliases of the level before: 10**9 values once expanded.
BOMB = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + level)}: &{chr(98 + level)} [{', '.join(['*' + chr(97 + level)] * 10)}]\n" for level in range(8))
LIMIT_2GB = 'ulimit -v 2000000; exec "$@"'


def madeval_limited(*args, cwd) -> subprocess.CompletedProcess:
    """The command line in a process limited to 2 GB of address space (the old readers went past it)."""
    return subprocess.run(["bash", "-c", LIMIT_2GB, "-", sys.executable, "-m", "madeval", *map(str, args)],
                          capture_output=True, text=True, timeout=300, cwd=cwd)


def assert_one_line(done: subprocess.CompletedProcess, expected: str) -> None:
    assert done.returncode == 2, done.stderr[-2000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("madeval: error: "), done.stderr[-2000:]
    assert expected in lines[0], lines[0]


@pytest.mark.parametrize("text, expected", [
    (BOMB + "m: {input: 1, output: *i}\n", "prices.yaml line 1: expands to more than 100000 values"),
    ("m: {input: 1, output: " + "[" * 5000 + "]" * 5000 + "}\n", "prices.yaml"),
    ("m: {input: 1, output: " + "9" * 5000 + "}\n", "prices.yaml: a number too long to read"),
    ("m: {input: 1, output: " + "9" * 400 + "}\n", "output must be a number from 0 to 1,000,000 (dollars per "
                                                   "million tokens), got a number of 400 digits"),
    ("m: {input: 1.0e+308, output: 1}\n", "input must be a number from 0 to 1,000,000"),
])
def test_hostile_price_files_are_one_line_and_status_2_in_bounded_memory(tmp_path, text, expected):
    assert len(text.encode()) < 12_000  # a small file each
    (tmp_path / "prices.yaml").write_text(text)
    done = madeval_limited("sample-size", "12032", "--prices", "prices.yaml", "--model", "m", cwd=tmp_path)
    assert_one_line(done, expected)


def test_a_price_file_nested_past_the_bound_names_the_depth(tmp_path):
    path = tmp_path / "prices.yaml"
    path.write_text("m: {input: 1, output: " + "[" * 100 + "1" + "]" * 100 + "}\n")
    with pytest.raises(UsageError, match="prices.yaml line 1: nests more than 64 levels deep"):
        read_price_table(path)


def test_the_dearest_price_a_file_may_give_keeps_every_cost_finite(tmp_path):
    path = tmp_path / "prices.yaml"
    path.write_text(f"m: {{input: {MAX_PRICE}, output: {MAX_PRICE}}}\n")
    price = read_price_table(path)["m"]
    assert price.cost(10**15, 10**15) == pytest.approx(2 * 10**15 * MAX_PRICE / 1e6)  # 2e15 dollars: finite


def test_a_config_file_shares_the_bounds(tmp_path):
    (tmp_path / "run.yaml").write_text(BOMB + "tasks: *i\n")
    done = madeval_limited("--config", "run.yaml", "--output-path", "out", cwd=tmp_path)
    assert_one_line(done, "malformed YAML in run.yaml line 1: expands to more than 100000 values")
    (tmp_path / "deep.yaml").write_text("tasks: " + "[" * 100 + "arith_mc" + "]" * 100 + "\n")
    done = madeval_limited("--config", "deep.yaml", "--output-path", "out", cwd=tmp_path)
    assert_one_line(done, "malformed YAML in deep.yaml line 1: nests more than 64 levels deep")
    assert not (tmp_path / "out").exists()


def test_a_task_file_shares_the_bounds(tmp_path):
    folder = tmp_path / "tasks"
    folder.mkdir()
    (folder / "bomb.yaml").write_text("task: bomb\n" + BOMB)
    done = madeval_limited("--tasks", "bomb", "--include-path", folder, "--output-path", "out", cwd=tmp_path)
    assert_one_line(done, "expands to more than 100000 values")
    assert "bomb.yaml" in done.stderr and not (tmp_path / "out").exists()


def test_a_file_over_the_size_bound_is_not_read_whole(tmp_path):
    from madeval.util.yaml_loader import MAX_YAML_BYTES, read_yaml_file

    path = tmp_path / "big.yaml"
    path.write_bytes(b"# " + b"x" * MAX_YAML_BYTES + b"\n")
    with pytest.raises(UsageError, match=f"big.yaml is larger than {MAX_YAML_BYTES >> 20} MB"):
        read_yaml_file(path)


def test_every_yaml_file_is_read_by_the_one_bounded_reader():
    """No ``yaml.load``/``safe_load``/``full_load``/``unsafe_load`` call in madeval/ or plugins/ but
    the bounded reader's own (:mod:`madeval.util.yaml_loader`)."""
    root = Path(madeval.__file__).parent
    sources = [*root.rglob("*.py"), *(p for p in (root.parent / "plugins").rglob("*.py") if "tests" not in p.parts)]
    readers = {"load", "safe_load", "full_load", "unsafe_load", "load_all", "safe_load_all", "compose"}
    found = []
    for path in sources:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in readers
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "yaml"):
                found.append(f"{path.relative_to(root.parent)}:{node.lineno}")
    assert found and all(place.startswith("madeval/util/yaml_loader.py:") for place in found), found
