"""Tests of tools/cudalab_grade/sandbox.py (and proc.run's cgroup), without a GPU.

For each sandbox kind that works on the machine running the tests (bwrap,
unshare), a sandboxed /bin/sh must not see or write what it was not given,
must have an empty private /tmp, no network, the file descriptors its parent
passed, none of the environment outside the allow-list, and no process left
once its main process ends. A kind that does not work here is skipped with
the reason (`python3 -m cudalab_grade.sandbox --check` from tools/ says it).
The cgroup code's parsing and checks are tested on a fake tree; a real cgroup
only where a writable cgroup v2 hierarchy exists.
"""
from __future__ import annotations

import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import uuid
from pathlib import Path
from unittest import mock

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "tools"))

from cudalab_grade import proc, sandbox  # noqa: E402

IS_ROOT = os.geteuid() == 0
PYTHON = shutil.which("python3", path="/usr/bin:/bin")  # one the sandbox shows (under /usr)
# temporary folders to bind must not be under /tmp (the sandbox has its own)
SCRATCH = "/var/tmp" if os.path.isdir("/var/tmp") else None


def _host_cmdlines() -> list[bytes]:
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/cmdline", "rb") as f:
                    out.append(f.read())
            except OSError:
                pass
    return out


def _wait_gone(marker: bytes, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not any(marker in c for c in _host_cmdlines()):
            return True
        time.sleep(0.05)
    return False


class SandboxCases:
    """The cases, run once per kind by the subclasses below."""
    kind = ""

    @classmethod
    def setUpClass(cls):
        why = sandbox.probe(cls.kind)
        if why is not None:
            raise unittest.SkipTest(f"the {cls.kind} sandbox does not work here: {why}")
        if SCRATCH is None:
            raise unittest.SkipTest("no /var/tmp for the test's folders")

    def setUp(self):
        self.dir = Path(tempfile.mkdtemp(dir=SCRATCH, prefix="cudalab-sandbox-test-"))
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.shown = self.dir / "shown"      # given read-only
        self.hidden = self.dir / "hidden"    # not given
        for d in (self.shown, self.hidden):
            d.mkdir()
            d.chmod(0o755)
        self.dir.chmod(0o755)
        (self.shown / "visible.txt").write_text("visible\n")
        (self.shown / "visible.txt").chmod(0o644)
        (self.hidden / "secret.txt").write_text("secret\n")
        (self.hidden / "secret.txt").chmod(0o644)

    def sh(self, script: str, *, readable=(), writable=(), compile=False, env=None,
           pass_fds=(), cwd=None, timeout=60) -> subprocess.CompletedProcess:
        if compile:
            words = sandbox.compile_prefix(self.kind, readable=list(readable), writable=list(writable))
        else:
            words = sandbox.runner_prefix(self.kind, readable=list(readable), gpu=True)
        return subprocess.run(words + ["/bin/sh", "-c", script], capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, timeout=timeout, env=env,
                              pass_fds=pass_fds, cwd=cwd)

    def test_sees_only_what_it_is_given(self):
        p = self.sh(f"cat {self.shown}/visible.txt; cat {self.hidden}/secret.txt; "
                    f"ls {REPO} {Path.home()} {REPO / 'solutions'}; ls /", readable=[self.shown])
        self.assertIn("visible", p.stdout)
        self.assertNotIn("secret", p.stdout)
        self.assertIn("No such file", p.stderr)
        top = set(p.stdout.split())
        self.assertNotIn("root", top)
        self.assertNotIn("home", top)

    def test_writes_only_to_its_tmp(self):
        p = self.sh(f"touch {self.shown}/new; touch /usr/new; touch /new; touch /etc/new; "
                    "echo x > /tmp/new && cat /tmp/new && echo y > /dev/shm/new && echo wrote",
                    readable=[self.shown])
        self.assertIn("wrote", p.stdout, p.stderr)
        self.assertFalse((self.shown / "new").exists())
        self.assertFalse(Path("/usr/new").exists())
        self.assertFalse(Path("/new").exists())
        self.assertEqual(p.stderr.count("touch:"), 4, p.stderr)

    def test_tmp_is_private_and_empty(self):
        with tempfile.NamedTemporaryFile(dir="/tmp", prefix="cudalab-host-marker-") as marker:
            p = self.sh("ls -A /tmp /dev/shm; echo end")
            self.assertEqual(p.stdout.split(), ["/dev/shm:", "/tmp:", "end"], p.stderr)
            self.assertNotIn(os.path.basename(marker.name), p.stdout)

    def test_no_network(self):
        if PYTHON is None:
            self.skipTest("no python3 under /usr/bin for the sandboxed client")
        server = socket.socket()
        server.bind(("127.0.0.1", 0))
        server.listen()
        self.addCleanup(server.close)
        port = server.getsockname()[1]
        probe = ("import socket\n"
                 f"try:\n socket.create_connection(('127.0.0.1', {port}), timeout=3)\n print('connected')\n"
                 "except OSError as e:\n print('refused', e)\n")
        socket.create_connection(("127.0.0.1", port), timeout=3).close()  # the host can
        p = self.sh(f"{PYTHON} -c {shlex.quote(probe)}; tail -n +3 /proc/net/dev")
        self.assertIn("refused", p.stdout, p.stderr)
        self.assertNotIn("connected", p.stdout)
        interfaces = [line.split(":")[0].strip() for line in p.stdout.splitlines() if ":" in line
                      and not line.startswith("refused")]
        self.assertEqual(interfaces, ["lo"])

    def test_inherited_descriptor_stays_open(self):
        if PYTHON is None:
            self.skipTest("no python3 under /usr/bin")
        ours, theirs = socket.socketpair()
        self.addCleanup(ours.close)
        fd = theirs.fileno()
        ours.sendall(b"ping")
        code = f"import os; m = os.read({fd}, 4); os.write({fd}, m + b' pong')"
        p = self.sh(f"{PYTHON} -c {shlex.quote(code)}", pass_fds=(fd,))
        theirs.close()
        self.assertEqual(p.returncode, 0, p.stderr)
        ours.settimeout(5)
        self.assertEqual(ours.recv(100), b"ping pong")

    def test_daemon_dies_with_the_main_process(self):
        token = f"1000.{uuid.uuid4().int % 10**9}"
        p = self.sh(f"setsid sleep {token} & d=$!; (sleep 1000 &) ; sleep 0.3; "
                    "kill -0 $d && echo daemon-alive; exit 3")
        self.assertEqual(p.returncode, 3, p.stderr)
        self.assertIn("daemon-alive", p.stdout)
        self.assertTrue(_wait_gone(f"sleep\0{token}".encode()), "the daemon outlived the sandbox")

    def test_killing_the_sandbox_kills_everything(self):
        token = f"1000.{uuid.uuid4().int % 10**9}"
        words = sandbox.runner_prefix(self.kind, readable=[])
        p = subprocess.Popen(words + ["/bin/sh", "-c", f"setsid sleep {token} & sleep {token}"],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + 10
        while sum(f"sleep\0{token}".encode() in c for c in _host_cmdlines()) < 2:
            self.assertLess(time.monotonic(), deadline, "the sandboxed sleeps did not start")
            time.sleep(0.05)
        p.send_signal(signal.SIGKILL)  # the outermost process only, as proc.run's watchdog may
        p.wait(10)
        self.assertTrue(_wait_gone(f"sleep\0{token}".encode()), "a process outlived its sandbox")

    def test_environment_is_filtered(self):
        env = {"PATH": "/usr/bin:/bin", "SECRET_TOKEN": "s3", "CUDALAB_SEED": "42",
               "CUDALAB_FOO": "bar", "CUDA_VISIBLE_DEVICES": "0", "NVIDIA_X": "y",
               "LC_ALL": "C", "MULTI": "a\nCUDALAB_FAKE=1"}
        p = self.sh("env", env=env)
        got = dict(line.split("=", 1) for line in p.stdout.splitlines() if "=" in line)
        for name in ("SECRET_TOKEN", "CUDALAB_SEED", "MULTI", "CUDALAB_FAKE"):
            self.assertNotIn(name, got)
        self.assertEqual(got.get("CUDALAB_FOO"), "bar")
        self.assertEqual(got.get("CUDA_VISIBLE_DEVICES"), "0")
        self.assertEqual(got.get("NVIDIA_X"), "y")
        self.assertEqual(got.get("PATH"), "/usr/bin:/bin")
        self.assertEqual(got.get("HOME"), "/tmp")

    def test_no_privileges_and_own_pids(self):
        p = self.sh("id -u; grep -E '^Cap(Eff|Prm|Bnd):' /proc/self/status; grep NoNewPrivs /proc/self/status;"
                    " ls /proc | grep -c '^[0-9]'")
        lines = p.stdout.split("\n")
        if IS_ROOT:
            self.assertEqual(lines[0], str(sandbox.SANDBOX_UID))
        for line in lines:
            if line.startswith("Cap"):
                self.assertTrue(line.endswith("0000000000000000"), line)
        self.assertIn("NoNewPrivs:\t1", p.stdout)
        self.assertLess(int(lines[-2]), 10, "the sandbox sees the host's processes")

    def test_exit_status(self):
        self.assertEqual(self.sh("exit 7").returncode, 7)
        self.assertIn(self.sh("kill -SEGV $$").returncode, (128 + signal.SIGSEGV, -signal.SIGSEGV))

    def test_runs_nothing_when_the_sandbox_cannot_be_built(self):
        gone = self.dir / "gone"
        gone.mkdir()
        words = sandbox.runner_prefix(self.kind, readable=[gone])
        gone.rmdir()
        marker = self.dir / "ran"
        p = subprocess.run(words + ["/bin/sh", "-c", f"echo > {marker}; echo ran"], capture_output=True,
                           text=True, stdin=subprocess.DEVNULL, timeout=60)
        self.assertNotEqual(p.returncode, 0)
        self.assertNotIn("ran", p.stdout)
        if self.kind == "unshare":
            self.assertEqual(p.returncode, sandbox.SETUP_FAILED, p.stderr)

    def test_compiler_writes_only_its_folders(self):
        out = self.dir / "out"
        out.mkdir()
        out.chmod(0o777)
        p = self.sh(f"pwd; echo obj > a.o && echo compiled; touch {self.shown}/x; cat {self.hidden}/secret.txt;"
                    " cat /etc/shadow; ls /sys /dev/nvidiactl",
                    readable=[self.shown], writable=[out], compile=True, cwd=out)
        self.assertEqual(p.stdout.splitlines()[:2], [str(out), "compiled"], p.stderr)
        self.assertEqual((out / "a.o").read_text(), "obj\n")
        self.assertFalse((self.shown / "x").exists())
        self.assertNotIn("secret", p.stdout)
        self.assertNotIn("root:", p.stdout)  # /etc/shadow is hidden (or unreadable)


class BwrapTest(SandboxCases, unittest.TestCase):
    kind = "bwrap"


class UnshareTest(SandboxCases, unittest.TestCase):
    kind = "unshare"


class PrefixTest(unittest.TestCase):
    """The words, without running them."""

    def test_no_sandbox_is_no_words(self):
        self.assertEqual(sandbox.runner_prefix(None, readable=[]), [])
        self.assertEqual(sandbox.compile_prefix(None, readable=[], writable=[]), [])

    def test_refuses_root_and_missing_paths(self):
        with self.assertRaises(ValueError):
            sandbox._mounts(["/"], [], gpu=False, sysfs=False, tmp_size=1, masks=[])
        with self.assertRaises(FileNotFoundError):
            sandbox._mounts(["/nonexistent/cudalab"], [], gpu=False, sysfs=False, tmp_size=1, masks=[])

    def test_mounts_order_and_modes(self):
        with tempfile.TemporaryDirectory() as d:
            inner = Path(d) / "a" / "b"
            inner.mkdir(parents=True)
            ops = sandbox._mounts([inner, Path(d) / "a"], [inner], gpu=False, sysfs=True,
                                  tmp_size=4096, masks=[])
            binds = [op for op in ops if op[1] in (str(inner), str(Path(d) / "a"))]
            self.assertEqual(binds, [("ro", str(Path(d) / "a"), str(Path(d) / "a")),
                                     ("rw", str(inner), str(inner))])
            kinds = [op[0] for op in ops]
            self.assertLess(kinds.index("devfs"), kinds.index("proc"))
            self.assertIn(("tmpfs", "/tmp", "4096"), ops)
            self.assertIn(("sysfs", "/sys"), ops)

    def test_staging_avoids_bound_paths(self):
        ops = [("ro", "/mnt/x", "/mnt/x"), ("rw", "/media", "/media")]
        with mock.patch.object(sandbox, "STAGING", ("/mnt", "/media", "/var")), \
                mock.patch("os.path.isdir", return_value=True), \
                mock.patch("os.path.islink", return_value=False):
            self.assertEqual(sandbox._staging(ops), "/var")

    def test_bwrap_words(self):
        with mock.patch.object(sandbox, "bwrap_path", return_value="/opt/bwrap"), \
                mock.patch.object(sandbox, "_which", side_effect=lambda n: "/usr/bin/" + n), \
                mock.patch.object(sandbox, "gpu_nodes", return_value=["/dev/nvidia0", "/dev/nvidiactl"]), \
                mock.patch.object(sandbox, "_bwrap_has_size", return_value=True), \
                mock.patch("os.geteuid", return_value=0):
            words = sandbox.runner_prefix("bwrap", readable=[REPO / "tools"])
        self.assertEqual(words[:3], ["/bin/sh", str(sandbox.INIT), "--"])
        self.assertEqual(words[3], "/opt/bwrap")
        for w in ("--unshare-net", "--unshare-pid", "--unshare-ipc", "--die-with-parent"):
            self.assertIn(w, words)
        self.assertNotIn("--unshare-user", words)
        self.assertNotIn("--new-session", words)  # the runner stays in the checker's process group
        i = words.index("/dev/nvidia0")
        self.assertEqual(words[i - 1], "--dev-bind")
        i = words.index(str(REPO / "tools"))
        self.assertEqual(words[i - 1], "--ro-bind")
        i = words.index("/tmp")
        self.assertEqual(words[i - 5:i], ["--size", str(sandbox.RUNNER_TMP_SIZE), "--perms", "1777", "--tmpfs"])
        tail = words[words.index("--", 4):]
        self.assertEqual(tail[:3], ["--", "/usr/bin/setpriv", f"--reuid={sandbox.SANDBOX_UID}"])
        self.assertEqual(tail[-1], "--")

    def test_unshare_words(self):
        with tempfile.TemporaryDirectory() as d, \
                mock.patch.object(sandbox, "_which", side_effect=lambda n: "/usr/bin/" + n), \
                mock.patch.object(sandbox, "gpu_nodes", return_value=[]), \
                mock.patch("os.geteuid", return_value=1000):
            words = sandbox.compile_prefix("unshare", readable=[REPO / "tools"], writable=[d])
        self.assertEqual(words[0], "/usr/bin/unshare")
        for w in ("--mount", "--pid", "--fork", "--kill-child", "--net", "--ipc", "--uts",
                  "--user", "--map-root-user"):
            self.assertIn(w, words)
        i = words.index(str(sandbox.INIT))
        self.assertEqual(words[i - 1], "/bin/sh")
        self.assertEqual(words[i + 1], "--root")
        self.assertEqual(words[words.index("--rw") + 1], d)
        self.assertNotIn("--sysfs", words)
        self.assertEqual(words[-2:], ["--nocaps", "--"])

    def test_detect_honours_cudalab_sandbox(self):
        with mock.patch.dict(os.environ, {"CUDALAB_SANDBOX": "none"}):
            self.assertIsNone(sandbox.detect())
        with mock.patch.dict(os.environ, {"CUDALAB_SANDBOX": "unshare"}), \
                mock.patch.object(sandbox, "probe", side_effect=lambda k: None) as probe:
            self.assertEqual(sandbox.detect(), "unshare")
            probe.assert_called_once_with("unshare")
        with mock.patch.dict(os.environ, {"CUDALAB_SANDBOX": ""}), \
                mock.patch.object(sandbox, "probe", side_effect=lambda k: "no" if k == "bwrap" else None):
            self.assertEqual(sandbox.detect(), "unshare")

    def test_private_etc(self):
        with tempfile.TemporaryDirectory() as d:
            (Path(d) / "open").write_text("x")
            (Path(d) / "shadow").write_text("x")
            (Path(d) / "shadow").chmod(0o640)
            (Path(d) / "ssl" / "private").mkdir(parents=True)
            (Path(d) / "ssl" / "private").chmod(0o700)
            (Path(d) / "ssl" / "cert.pem").write_text("x")
            self.assertEqual(sorted(sandbox.private_etc(d)),
                             [f"{d}/shadow", f"{d}/ssl/private"])

    def test_cli_check_runs(self):
        p = subprocess.run([sys.executable, "-m", "cudalab_grade.sandbox", "--check"], cwd=REPO / "tools",
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("chosen:", p.stdout)
        self.assertIn("cgroup v2", p.stdout)


class CgroupPureTest(unittest.TestCase):
    """The cgroup code on a fake tree of plain files."""

    def setUp(self):
        self.root = Path(tempfile.mkdtemp())
        self.addCleanup(shutil.rmtree, self.root, True)
        (self.root / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
        (self.root / "cgroup.subtree_control").write_text("")
        (self.root / "cgroup.procs").write_text("")

    def test_parsing(self):
        text = "low 0\nhigh 3\nmax 12\noom 2\noom_kill 1\noom_group_kill 1\n"
        self.assertEqual(sandbox.parse_flat_keyed(text)["oom_kill"], 1)
        self.assertEqual(sandbox.parse_flat_keyed("populated 0\nfrozen 0\n"), {"populated": 0, "frozen": 0})
        self.assertEqual(sandbox.cpu_max(2), "200000 100000")
        self.assertEqual(sandbox.cpu_max(0.5), "50000 100000")

    def test_paths_and_controllers(self):
        cg = sandbox.Cgroup(memory_max=1 << 30, cpus=1, base=self.root / "cudalab", name="x")
        self.assertEqual(cg.path, self.root / "cudalab" / "x")
        self.assertEqual(cg.controllers(), ["memory", "cpu"])
        self.assertEqual(sandbox.Cgroup().controllers(), [])
        with mock.patch.dict(os.environ, {"CUDALAB_CGROUP": "/sys/fs/cgroup/delegated"}):
            self.assertEqual(sandbox.Cgroup(name="y").path, Path("/sys/fs/cgroup/delegated/y"))
        a, b = sandbox.Cgroup(base=self.root), sandbox.Cgroup(base=self.root)
        self.assertNotEqual(a.path, b.path)

    def test_unavailable_reasons(self):
        base = self.root / "cudalab"
        self.assertIsNone(sandbox.Cgroup.unavailable(base))
        self.assertIn("hugetlb", sandbox.Cgroup.unavailable(base, ("memory", "hugetlb")))
        (self.root / "cgroup.controllers").unlink()
        self.assertIn("not in a cgroup v2", sandbox.Cgroup.unavailable(base))
        (self.root / "cgroup.controllers").write_text("memory pids cpu")
        (self.root / "cgroup.type").write_text("domain")
        (self.root / "cgroup.procs").write_text("1\n")
        self.assertIn("holds processes", sandbox.Cgroup.unavailable(base))
        (self.root / "cgroup.subtree_control").write_text("memory pids cpu\n")
        self.assertIsNone(sandbox.Cgroup.unavailable(base))

    def test_enter_writes_limits_and_reads_events(self):
        base = self.root / "cudalab"
        base.mkdir()
        (base / "cgroup.subtree_control").write_text("memory\n")
        cg = sandbox.Cgroup(memory_max=123, pids_max=7, cpus=1.5, base=base, name="x")
        cg.__enter__()  # on a fake tree: no kill, no removal
        self.assertEqual((self.root / "cgroup.subtree_control").read_text(), "+memory +pids +cpu")
        self.assertEqual((base / "cgroup.subtree_control").read_text(), "+pids +cpu")
        self.assertEqual((cg.path / "memory.max").read_text(), "123")
        self.assertEqual((cg.path / "pids.max").read_text(), "7")
        self.assertEqual((cg.path / "cpu.max").read_text(), "150000 100000")
        self.assertEqual(cg.oom_killed(), 0)
        self.assertIsNone(cg.memory_peak())
        (cg.path / "memory.events").write_text("low 0\nhigh 0\nmax 5\noom 1\noom_kill 1\n")
        (cg.path / "memory.peak").write_text("4096\n")
        self.assertEqual(cg.oom_killed(), 1)
        self.assertEqual(cg.memory_peak(), 4096)
        wrapped = cg.wrap(["prog", "arg"])
        self.assertEqual(wrapped[0], "/bin/sh")
        self.assertEqual(wrapped[3:], [str(cg.path / "cgroup.procs"), "prog", "arg"])


class FakeCgroup:
    """What proc.run uses of a cgroup, with a chosen OOM count."""
    memory_max = 1 << 20

    def __init__(self, ooms_after: int = 0):
        self.ooms = 0
        self.ooms_after = ooms_after
        self.kills = 0

    def wrap(self, cmd):
        return cmd

    def kill(self):
        self.kills += 1
        self.ooms = self.ooms_after

    def oom_killed(self):
        return self.ooms

    def memory_peak(self):
        return 5 << 20


class ProcCgroupTest(unittest.TestCase):
    def test_program_end_kills_the_cgroup(self):
        cg = FakeCgroup()
        p = proc.run(["/bin/sh", "-c", "echo hi; exit 4"], 30, Path.cwd(), cgroup=cg)
        self.assertEqual((p.returncode, p.output, p.memory_exceeded), (4, "hi\n", None))
        self.assertGreaterEqual(cg.kills, 1)

    def test_oom_kill_is_memory_exceeded(self):
        cg = FakeCgroup(ooms_after=1)
        p = proc.run(["/bin/sh", "-c", "kill -KILL $$"], 30, Path.cwd(), cgroup=cg)
        self.assertIsNone(p.returncode)
        self.assertEqual(p.memory_exceeded, 5 << 20)
        self.assertEqual(p.failure(), "killed at 5 MiB of host memory")

    def test_timeout_kills_the_cgroup(self):
        cg = FakeCgroup()
        p = proc.run(["/bin/sh", "-c", "sleep 30"], 0.3, Path.cwd(), cgroup=cg)
        self.assertTrue(p.timed_out)
        self.assertGreaterEqual(cg.kills, 1)


def _writable_cgroup2() -> Path | None:
    """A cgroup v2 folder where this process may make children, or None."""
    for top in (sandbox.default_base().parent, Path("/sys/fs/cgroup/unified")):
        if (top / "cgroup.procs").exists() and os.access(top, os.W_OK):
            return top
    return None


class RealCgroupTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.top = _writable_cgroup2()
        if cls.top is None:
            raise unittest.SkipTest("no writable cgroup v2 hierarchy here")

    def test_collects_and_kills_every_process(self):
        token = f"1000.{uuid.uuid4().int % 10**9}"
        with sandbox.Cgroup(base=self.top / f"cudalab-test-{os.getpid()}") as cg:
            p = proc.run(["/bin/sh", "-c", f"setsid sleep {token} & cat /proc/self/cgroup; echo started"],
                         30, Path.cwd(), cgroup=cg)
            self.assertIn(cg.path.name, p.output)
            self.assertEqual(p.returncode, 0, p.output)
            self.assertEqual(cg.procs(), [])
        self.assertTrue(_wait_gone(f"sleep\0{token}".encode()))
        self.assertFalse(cg.path.exists())
        cg.base.rmdir()

    def test_memory_limit(self):
        if sandbox.Cgroup.unavailable(controllers=("memory",)):
            self.skipTest(sandbox.Cgroup.unavailable(controllers=("memory",)))
        with sandbox.Cgroup(memory_max=64 << 20, pids_max=64) as cg:
            p = proc.run([sys.executable, "-c", "x = bytearray(512 << 20); x[::4096] = b'1' * len(x[::4096])"],
                         60, Path.cwd(), cgroup=cg)
        self.assertIsNotNone(p.memory_exceeded, p.output)
        self.assertIsNone(p.returncode)


if __name__ == "__main__":
    unittest.main()
