"""Grading a class on a Slurm cluster: `tools/grade --submissions DIR --slurm`.

Writes, in `<out>/slurm/`:

    entries.txt     one submission (entry name) per line; array task i grades line i + 1
    prepare.sbatch  builds the instructor's tree once, in <out>/shared
    grade.sbatch    the array: one task per submission, one GPU per task
    merge.sbatch    combines <out>/tasks/* into <out>/gradebook.csv and <out>/summary.md
    submit.sh       submits the three with dependencies (prepare -> array -> merge)

The course folder, the submissions and <out> must be on a file system that
every node sees, at the same paths.
"""
from __future__ import annotations

import shlex
from pathlib import Path

from .submissions import Entry


def _q(x) -> str:
    return shlex.quote(str(x))


def write_scripts(root: Path, out: Path, submissions_dir: Path, entries: list[Entry],
                  grade_args: list[str], partition: str | None = None,
                  time_limit: str = "01:00:00", cpus: int = 4, max_parallel: int | None = None
                  ) -> Path:
    """The scripts above; grade_args are the options every task passes on (seed, limits...)."""
    d = out / "slurm"
    d.mkdir(parents=True, exist_ok=True)
    (d / "logs").mkdir(exist_ok=True)
    (d / "entries.txt").write_text("".join(e.path.name + "\n" for e in entries))
    grade = root / "tools" / "grade"
    common = " ".join(_q(a) for a in grade_args)
    part = f"#SBATCH --partition={partition}\n" if partition else ""
    n = len(entries)
    throttle = f"%{max_parallel}" if max_parallel else ""
    head = "#!/bin/bash\n"
    prepare = (
        f"{head}#SBATCH --job-name=cudalab-prepare\n{part}#SBATCH --gres=gpu:1\n"
        f"#SBATCH --cpus-per-task={cpus}\n#SBATCH --time={time_limit}\n"
        f"#SBATCH --output={_q(d / 'logs' / 'prepare-%j.out')}\n"
        "set -euo pipefail\n"
        f"cd {_q(root)}\n"
        "# The instructor's tree, built once on a GPU node (so the GPU's architecture is used).\n"
        f"{_q(grade)} --submissions {_q(submissions_dir)} --out {_q(out)} --prepare-only "
        f"--jobs \"${{SLURM_CPUS_PER_TASK:-{cpus}}}\" {common}\n")
    array = (
        f"{head}#SBATCH --job-name=cudalab-grade\n{part}#SBATCH --array=0-{max(0, n - 1)}{throttle}\n"
        f"#SBATCH --gres=gpu:1\n#SBATCH --cpus-per-task={cpus}\n#SBATCH --time={time_limit}\n"
        f"#SBATCH --output={_q(d / 'logs' / 'grade-%A_%a.out')}\n"
        "set -euo pipefail\n"
        f"cd {_q(root)}\n"
        f"entry=$(sed -n \"$((SLURM_ARRAY_TASK_ID + 1))p\" {_q(d / 'entries.txt')})\n"
        "test -n \"$entry\"\n"
        "# Slurm gives the task one GPU and sets CUDA_VISIBLE_DEVICES; the grader keeps it.\n"
        f"{_q(grade)} --submissions {_q(submissions_dir)} --only \"$entry\" "
        f"--out {_q(out)}/tasks/\"$entry\" --shared-build {_q(out / 'shared')} "
        f"--jobs \"${{SLURM_CPUS_PER_TASK:-{cpus}}}\" --quiet {common} || test $? -eq 3\n")
    merge = (
        f"{head}#SBATCH --job-name=cudalab-merge\n{part}#SBATCH --cpus-per-task=1\n"
        f"#SBATCH --time=00:10:00\n#SBATCH --output={_q(d / 'logs' / 'merge-%j.out')}\n"
        "set -euo pipefail\n"
        f"cd {_q(root)}\n"
        f"{_q(grade)} --merge {_q(out)}/tasks --out {_q(out)}\n")
    submit = (
        "#!/bin/bash\n# Submit the class: prepare, then one array task per submission, then merge.\n"
        "set -euo pipefail\n"
        f"cd {_q(d)}\n"
        "prep=$(sbatch --parsable prepare.sbatch)\n"
        "arr=$(sbatch --parsable --dependency=afterok:${prep%%;*} grade.sbatch)\n"
        "merge=$(sbatch --parsable --dependency=afterany:${arr%%;*} merge.sbatch)\n"
        "echo \"prepare job $prep, grading array $arr, merge job $merge\"\n"
        f"echo \"results: {out}/gradebook.csv once job $merge has run\"\n")
    for name, text in (("prepare.sbatch", prepare), ("grade.sbatch", array),
                       ("merge.sbatch", merge), ("submit.sh", submit)):
        p = d / name
        p.write_text(text)
        p.chmod(0o755)
    return d
