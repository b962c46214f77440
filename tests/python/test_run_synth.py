"""The run-check (tests/python/run_synth.py) can fail: on its fixtures
(hand-written kernels, some broken on purpose) each fixture fails exactly as
its JSON expects, and a fixture whose expectation is wrong fails the run."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT, pairpipe_bin

SCRIPT = ROOT / "tests" / "python" / "run_synth.py"
FIXTURES = ROOT / "tests" / "python" / "fixtures" / "run_check"


def run(fixtures, tmp_path, *extra):
    cmd = [sys.executable, str(SCRIPT), "--fixtures", str(fixtures), "--work", str(tmp_path / "work"), *extra]
    binary = pairpipe_bin()
    if binary.is_file():
        cmd += ["--pairpipe", str(binary)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=900, cwd=tmp_path)


def test_fixtures_fail_as_expected(tmp_path):
    done = run(FIXTURES, tmp_path, "-v")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    # Every kind of broken kernel is among the fixtures, and was caught.
    expected = set()
    for spec in FIXTURES.glob("*.json"):
        expected.update(json.loads(spec.read_text()).get("expect", []))
    assert {"unwritten", "nonfinite", "ignored", "unchanged", "reads_out", "bvh_dependent", "ptx", "spec"} <= expected
    for code in expected:
        assert f"['{code}'] as expected" in done.stdout, code


@pytest.mark.parametrize("fixture", ["neg_nan", "neg_unwritten", "neg_ignored", "particles"])
def test_a_wrong_expectation_fails_the_run(tmp_path, fixture):
    """The same kernel said to pass (or to fail when it passes) fails the run:
    the checker's verdict, not the expectation, decides."""
    fixtures = tmp_path / "fixtures"
    fixtures.mkdir()
    for ext in (".py", ".json"):
        shutil.copy(FIXTURES / f"{fixture}{ext}", fixtures / f"{fixture}{ext}")
    meta = json.loads((fixtures / f"{fixture}.json").read_text())
    meta["expect"] = [] if meta["expect"] else ["nonfinite"]
    (fixtures / f"{fixture}.json").write_text(json.dumps(meta))
    done = run(fixtures, tmp_path, "--no-ptx")
    assert done.returncode == 1, done.stdout[-4000:]
    assert f"{fixture}: expected" in done.stdout


def test_a_kernel_warp_cannot_build_is_named_and_the_others_still_run(tmp_path):
    """One kernel that fails warp's build breaks the module the category shares:
    the checker builds each kernel alone, names that one ("build"), and still
    checks the others."""
    fixtures = tmp_path / "fixtures"
    fixtures.mkdir()
    for name in ("blur_2d", "neg_unwritten"):
        for ext in (".py", ".json"):
            shutil.copy(FIXTURES / f"{name}{ext}", fixtures / f"{name}{ext}")
    (fixtures / "neg_build.py").write_text(
        "import warp as wp\n\n\n@wp.kernel\n"
        "def mixed_types(x: wp.array(dtype=float), y: wp.array(dtype=float)):\n"
        "    i = wp.tid()\n    y[i] = x[i] + wp.vec3(1.0, 2.0, 3.0)\n"
    )
    spec = json.loads((FIXTURES / "neg_nan.json").read_text())["launch_spec"]
    (fixtures / "neg_build.json").write_text(json.dumps({"launch_spec": spec, "expect": ["build"]}))
    done = run(fixtures, tmp_path, "--no-ptx", "-v")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "neg_build: ['build'] as expected" in done.stdout
    assert "neg_unwritten: ['unwritten'] as expected" in done.stdout
    assert "blur_2d: pass as expected" in done.stdout
