"""`python -m sluice` is the sluice command, installed inside the package."""
import subprocess
import sys

import sluice


def run(*args):
    return subprocess.run([sys.executable, "-m", "sluice", *args], capture_output=True, text=True, timeout=120)


def test_the_module_runs_the_command(spark, tmp_path):
    version = run("--version")
    assert version.returncode == 0 and version.stdout.strip() == f"sluice {sluice.__version__}"
    spark.range(3).write.save(str(tmp_path / "t"))
    history = run("delta", "history", str(tmp_path / "t"))
    assert history.returncode == 0, history.stderr
    assert "|    WRITE|" in history.stdout
    rows = run("delta", "show", str(tmp_path / "t"))
    assert [line for line in rows.stdout.splitlines() if line.startswith("|")] == ["| id|", "|  0|", "|  1|", "|  2|"]
    wrong = run("delta", "history", str(tmp_path / "missing"))
    assert wrong.returncode != 0 and "DELTA_TABLE_NOT_FOUND" in wrong.stderr
