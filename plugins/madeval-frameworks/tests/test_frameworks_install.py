"""Installing the plugin packages into a clean virtual environment next to madeval, and uninstalling them.

The clean environment is a new ``python -m venv`` whose site-packages links every entry of the
running environment's site-packages (madeval itself and its dependencies, offline) except anything
of the three plugin packages, so it starts without them even when ``make install`` put them into
``.venv``. The packages are then installed with pip as regular (non-editable) packages built from a
copy of their sources, one at a time and with pip's dependency resolution (offline: a folder of
built wheels stands in for the package index); nothing else is configured. The test shows that
installing madeval-freemad alone pulls in madeval-madc, which it declares as a dependency, that
the entry points alone make the components appear in ``madeval plugins`` and usable with
``--preset``, and that ``pip uninstall`` removes the components and the files again.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from madeval.records.folder import read_records
from madeval.simulator import simulate

PLUGINS = Path(__file__).resolve().parents[2]
PACKAGES = ("madeval-madc", "madeval-freemad", "madeval-frameworks")
OURS = tuple(p.replace("-", "_") for p in PACKAGES)


def _clean_venv(root: Path) -> Path:
    """A venv sharing this environment's packages except the plugin packages; its python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, capture_output=True)
    python = root / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               check=True, capture_output=True, text=True).stdout.strip())
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if not any(name in entry.name.lower().replace("-", "_") for name in OURS) and not (site / entry.name).exists():
            (site / entry.name).symlink_to(entry)
    return python


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("MADEVAL_LOAD_PLUGINS", "PYTHONPATH", "VIRTUAL_ENV")}
    return env


def _pip(python: Path, *args: str, ok: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), *args, "--quiet"],
                          capture_output=True, text=True, env=_env(), timeout=600)
    if ok:
        assert done.returncode == 0, done.stderr
    return done


def _importable(python: Path, module: str) -> bool:
    return subprocess.run([str(python), "-c", f"import {module}"], capture_output=True, env=_env()).returncode == 0


def _madeval(python: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(python), "-m", "madeval", *args], capture_output=True, text=True, env=_env(),
                          cwd=cwd, timeout=600)


def _ours(python: Path) -> dict[str, dict]:
    listed = _madeval(python, "plugins", "--json")
    assert listed.returncode == 0, listed.stderr
    return {p["package"]: p for p in json.loads(listed.stdout) if p["package"] in PACKAGES}


def test_frameworks_install_and_uninstall_in_a_clean_venv(tmp_path, generated_tasks):
    python = _clean_venv(tmp_path / "venv")
    assert _ours(python) == {}  # clean: madeval works, no plugin package
    assert not any(_importable(python, module) for module in OURS)
    sources = tmp_path / "src"
    for package in PACKAGES:  # build from copies, so the repository gets no build folders
        shutil.copytree(PLUGINS / package, sources / package,
                        ignore=shutil.ignore_patterns("tests", "__pycache__", "*.egg-info", "build"))
    offline = ("--no-index", "--no-build-isolation")

    # madeval-freemad declares madeval-madc: with no index to find it, pip refuses ...
    refused = _pip(python, "install", *offline, str(sources / "madeval-freemad"), ok=False)
    assert refused.returncode != 0 and "madeval-madc" in refused.stderr
    assert _ours(python) == {}
    # ... and with a wheel of madeval-madc to find, installing madeval-freemad alone pulls it in.
    wheels = tmp_path / "wheels"
    _pip(python, "wheel", "--no-deps", *offline, "--wheel-dir", str(wheels), str(sources / "madeval-madc"))
    _pip(python, "install", *offline, "--find-links", str(wheels), str(sources / "madeval-freemad"))
    assert sorted(_ours(python)) == ["madeval-freemad", "madeval-madc"]
    with simulate(tasks=generated_tasks.values(), accuracy=0.6, conformity=0.5) as sim:
        done = _madeval(python, "--tasks", "arith_mc", "--limit", "3", "--preset", "freemad_n", "--base-url",
                        sim.base_url, "--output-path", "out", "--cache", "off", "--no-progress", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    records = list(read_records(tmp_path / "out"))
    assert len(records) == 3 and all(r["transcript"]["decision"]["decider"] == "freemad_score" for r in records)

    _pip(python, "install", *offline, "--find-links", str(wheels), str(sources / "madeval-frameworks"))
    ours = _ours(python)
    assert sorted(ours) == sorted(PACKAGES)
    assert ours["madeval-freemad"]["components"]["deciders"] == ["freemad_score"]
    assert "som" in ours["madeval-madc"]["components"]["paradigms"]
    assert "agentverse" in ours["madeval-frameworks"]["components"]["presets"]
    assert all(p["version"] == "0.1.0" for p in ours.values())

    _pip(python, "uninstall", "--yes", "madeval-freemad")
    assert sorted(_ours(python)) == ["madeval-frameworks", "madeval-madc"]
    assert not _importable(python, "madeval_freemad") and _importable(python, "madeval_madc")
    refused = _madeval(python, "--tasks", "arith_mc", "--preset", "freemad_n", "--base-url", "http://127.0.0.1:9/v1")
    assert refused.returncode == 2 and refused.stderr.startswith("madeval: error: unknown preset 'freemad_n'")
    assert len(refused.stderr.strip().splitlines()) == 1
    _pip(python, "uninstall", "--yes", "madeval-frameworks", "madeval-madc")
    assert _ours(python) == {}
    assert not any(_importable(python, module) for module in OURS)
