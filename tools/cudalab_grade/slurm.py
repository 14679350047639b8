"""Grading a class on a Slurm cluster: `tools/grade --submissions DIR --slurm`.

Writes, in `<out>/slurm/`:

    entries.txt     one submission (entry name) per line; array task i grades line i + 1
    prepare.sbatch  builds the instructor's tree once, in <out>/shared
    grade.sbatch    the array: one task per submission, one GPU per task
    merge.sbatch    combines <out>/tasks/* into <out>/gradebook.csv and <out>/summary.md,
                    and names the tasks that did not finish (summary.md, failed-tasks.txt)
    submit.sh       submits the three with dependencies (prepare -> array -> merge)
    done/<i>        written by array task i when it has graded its entry

A task that fails (or never runs: the array is cancelled when the build fails)
leaves no done/<i>: the merge leaves its folder out and names it, and the merge
job fails, so that the run does not look complete.

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
    done = d / "done"
    if done.is_dir() and not done.is_symlink():
        for p in done.iterdir():  # the marks of an earlier set of scripts
            p.unlink()
    done.mkdir(exist_ok=True)
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
        "# An earlier run's mark and output of this task go first: a failure leaves neither.\n"
        f"rm -f {_q(d / 'done')}/\"$SLURM_ARRAY_TASK_ID\"\n"
        f"rm -rf {_q(out)}/tasks/\"$entry\"\n"
        "# Slurm gives the task one GPU and sets CUDA_VISIBLE_DEVICES; the grader keeps it.\n"
        f"{_q(grade)} --submissions {_q(submissions_dir)} --only=\"$entry\" "
        f"--out {_q(out)}/tasks/\"$entry\" --shared-build {_q(out / 'shared')} "
        f"--jobs \"${{SLURM_CPUS_PER_TASK:-{cpus}}}\" --quiet {common} || test $? -eq 3\n"
        f"mkdir -p {_q(d / 'done')}\n"
        f"printf '%s\\n' \"$entry\" > {_q(d / 'done')}/\"$SLURM_ARRAY_TASK_ID\"\n")
    merge = (
        f"{head}#SBATCH --job-name=cudalab-merge\n{part}#SBATCH --cpus-per-task=1\n"
        f"#SBATCH --time=00:10:00\n#SBATCH --output={_q(d / 'logs' / 'merge-%j.out')}\n"
        "set -uo pipefail\n"
        f"cd {_q(root)}\n"
        "# A task without its mark in done/ did not finish: its folder (partial, or an earlier\n"
        "# run's) is left out of the merge, and the task is named.\n"
        f"logs={_q(d / 'logs')}\n"
        "failed=()\n"
        "i=0\n"
        "while IFS= read -r entry; do\n"
        f"  if [ \"$(cat {_q(d / 'done')}/\"$i\" 2>/dev/null)\" != \"$entry\" ]; then\n"
        "    failed+=(\"array task $i ($entry) did not finish: see "
        "$logs/grade-${CUDALAB_ARRAY_JOB:-*}_$i.out\")\n"
        f"    rm -rf {_q(out)}/tasks/\"$entry\"\n"
        "  fi\n"
        "  i=$((i + 1))\n"
        f"done < {_q(d / 'entries.txt')}\n"
        f"mkdir -p {_q(out)}/tasks\n"
        f"{_q(grade)} --merge {_q(out)}/tasks --out {_q(out)}\n"
        "status=$?\n"
        f"rm -f {_q(d / 'failed-tasks.txt')}\n"
        "if [ ${#failed[@]} -gt 0 ]; then\n"
        f"  printf '%s\\n' \"${{failed[@]}}\" > {_q(d / 'failed-tasks.txt')}\n"
        "  { printf '\\n## Array tasks that did not finish\\n\\n'\n"
        "    printf 'Their students are not in the gradebook. Grade them again with '\n"
        "    printf '`sbatch --array=<tasks> grade.sbatch`, then `sbatch merge.sbatch` (in %s).\\n\\n' "
        f"{_q(d)}\n"
        "    printf -- '- %s\\n' \"${failed[@]}\"\n"
        f"  }} >> {_q(out)}/summary.md\n"
        "  printf 'merge: %s\\n' \"${failed[@]}\" >&2\n"
        "  exit 1\n"
        "fi\n"
        "exit $status\n")
    submit = (
        "#!/bin/bash\n# Submit the class: prepare, then one array task per submission, then merge.\n"
        "set -euo pipefail\n"
        f"cd {_q(d)}\n"
        "rm -f done/*  # the marks of an earlier submission: each task writes its own\n"
        "prep=$(sbatch --parsable prepare.sbatch)\n"
        "# A failed build cancels the array (instead of leaving it, and the merge, pending forever).\n"
        "arr=$(sbatch --parsable --kill-on-invalid-dep=yes --dependency=afterok:${prep%%;*} "
        "grade.sbatch)\n"
        "merge=$(sbatch --parsable --dependency=afterany:${arr%%;*} "
        "--export=ALL,CUDALAB_ARRAY_JOB=${arr%%;*} merge.sbatch)\n"
        "echo \"prepare job $prep, grading array $arr, merge job $merge\"\n"
        f"echo \"results: {out}/gradebook.csv once job $merge has run\"\n")
    for name, text in (("prepare.sbatch", prepare), ("grade.sbatch", array),
                       ("merge.sbatch", merge), ("submit.sh", submit)):
        p = d / name
        p.write_text(text)
        p.chmod(0o755)
    return d
