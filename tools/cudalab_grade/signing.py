"""The grader's signature on what it wrote, so that `tools/grade --merge` takes nothing else.

Each output folder of a class run holds `grader-secret.json` (mode 0600,
owned by the instructor): a random key made for that folder and the seeds
the runs into it used. Beside each `students/<id>/results.json` the grader
writes `grader.sig`, an HMAC-SHA256 of every file it wrote for that student
(results.json, report.md, build.log), keyed with the folder's key and bound
to the student's folder name, so a file edited, forged, or moved to another
student's folder fails the check. The students' programs never see the output
folder (they run sandboxed), so they cannot read the key.

Every file is read without following links, as a regular file, up to a size.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import stat
from dataclasses import dataclass, field
from pathlib import Path

SECRET_NAME = "grader-secret.json"
SIG_NAME = "grader.sig"
SIGNED = ("results.json", "report.md", "build.log")
_DOMAIN = b"cudalab-grade results v1\0"


class Untrusted(Exception):
    """A file the grader did not write, or cannot be read safely; the message says why."""


@dataclass
class Secret:
    key: bytes
    seeds: list[int] = field(default_factory=list)


def read_regular(path: Path, limit: int) -> bytes:
    """The bytes of path: a regular file, not a link, at most limit bytes; Untrusted otherwise."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise Untrusted(f"{path.name} is missing") from None
    except OSError as e:   # ELOOP: a symbolic link
        raise Untrusted(f"{path.name} cannot be opened ({e.strerror or e})") from None
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise Untrusted(f"{path.name} is not a regular file")
        if st.st_size > limit:
            raise Untrusted(f"{path.name} is larger than {limit} bytes")
        data = f.read(limit + 1)
    if len(data) > limit:
        raise Untrusted(f"{path.name} is larger than {limit} bytes")
    return data


def _parse(data: bytes, where: Path) -> Secret:
    try:
        obj = json.loads(data)
        key = bytes.fromhex(obj["key"])
        seeds = [int(s) for s in obj.get("seeds", []) if isinstance(s, int) and not isinstance(s, bool)]
    except (ValueError, KeyError, TypeError, AttributeError):
        raise Untrusted(f"{where} is not a grader key file") from None
    if len(key) < 32:
        raise Untrusted(f"{where}: the key is too short")
    return Secret(key, seeds)


def load(folder: Path) -> Secret:
    """The key of an output folder; Untrusted when missing or not the instructor's alone."""
    path = folder / SECRET_NAME
    data = read_regular(path, 1 << 16)
    st = os.lstat(path)
    if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
        raise Untrusted(f"{path} is not owned by this user")
    if st.st_mode & 0o077:
        raise Untrusted(f"{path} can be read or written by others (mode {st.st_mode & 0o777:o}; "
                        "want 600)")
    return _parse(data, path)


def write_file(path: Path, text: str, mode: int = 0o644) -> None:
    """path written with mode through a new file renamed over it: what was there
    (a link included) is replaced, never followed or written through."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    if os.path.lexists(tmp):
        os.unlink(tmp)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), mode)
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def _write(path: Path, secret: Secret) -> None:
    write_file(path, json.dumps({"key": secret.key.hex(), "seeds": sorted(set(secret.seeds)),
                                 "about": "tools/grade's key for this folder: keep it private (mode 600)"}),
               0o600)


def load_or_create(folder: Path, seed: int | None = None) -> Secret:
    """The folder's key (made, mode 0600, when there is none), with seed recorded in it."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / SECRET_NAME
    if os.path.lexists(path):
        secret = load(folder)
    else:
        secret = Secret(secrets.token_bytes(32))
    if seed is not None and seed not in secret.seeds or not path.exists():
        if seed is not None:
            secret.seeds.append(seed)
        _write(path, secret)
    return secret


def mac(key: bytes, student_dir: str, name: str, data: bytes) -> str:
    msg = _DOMAIN + student_dir.encode("utf-8", "surrogateescape") + b"\0" + name.encode() + b"\0"
    return hmac.new(key, msg + data, hashlib.sha256).hexdigest()


def sign(key: bytes, student_dir: Path, files: dict[str, bytes]) -> None:
    """Write student_dir/grader.sig for these files (name -> the bytes written)."""
    body = {"v": 1, "hmac": {n: mac(key, student_dir.name, n, d) for n, d in sorted(files.items())}}
    (student_dir / SIG_NAME).write_text(json.dumps(body, indent=1) + "\n")


def verify(key: bytes, student_dir: Path, files: dict[str, bytes]) -> None:
    """Untrusted unless grader.sig signs exactly these files' bytes for this folder name."""
    try:
        sig = json.loads(read_regular(student_dir / SIG_NAME, 1 << 16))
        macs = sig["hmac"]
        if not isinstance(macs, dict):
            raise TypeError
    except (ValueError, KeyError, TypeError):
        raise Untrusted(f"{SIG_NAME} is not a grader signature") from None
    for name, data in files.items():
        want = mac(key, student_dir.name, name, data)
        got = macs.get(name)
        if not isinstance(got, str) or not hmac.compare_digest(want, got):
            raise Untrusted(f"{name} does not match the grader's signature (edited, forged, "
                            "or moved from another folder)")
    missing = [n for n in macs if n not in files]
    if missing:
        raise Untrusted(f"{', '.join(missing)} signed by the grader but missing")
