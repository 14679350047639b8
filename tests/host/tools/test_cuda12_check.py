"""Unit tests of tools/cuda12-check: the toolkit tree it assembles (nothing is installed or compiled)."""
from __future__ import annotations

import contextlib
import io
import tempfile
import unittest
from pathlib import Path

from toolload import load_tool

cc = load_tool("cuda12-check", "cuda12_check")


def touch(path: Path, text: str = "") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def fake_wheels(prefix: Path) -> None:
    """The layout pip --target gives the three CUDA 12 wheels (a few of their files)."""
    n = prefix / "nvidia"
    touch(n / "__init__.py")
    touch(n / "cuda_runtime" / "include" / "cuda_runtime_api.h", "#define CUDART_VERSION 12090\n")
    touch(n / "cuda_runtime" / "include" / "cooperative_groups" / "reduce.h")
    touch(n / "cuda_runtime" / "lib" / "libcudart.so.12")
    touch(n / "cuda_runtime" / "lib" / "libcudart_static.a")
    touch(n / "cuda_runtime" / "lib" / "__init__.py")
    touch(n / "cuda_cccl" / "include" / "cub" / "cub.cuh")
    touch(n / "cuda_cccl" / "include" / "thrust" / "version.h")
    touch(n / "cuda_nvcc" / "include" / "crt" / "host_runtime.h", "CUDA 12")
    touch(n / "cuda_nvcc" / "include" / "fatbinary_section.h")
    touch(n / "cuda_nvcc" / "bin" / "ptxas")
    for name, version in (("nvidia_cuda_nvcc_cu12", "12.9.86"), ("nvidia_cuda_runtime_cu12", "12.9.79"),
                          ("nvidia_cuda_cccl_cu12", "12.9.27")):
        (prefix / f"{name}-{version}.dist-info").mkdir()


def fake_cuda13(root: Path) -> None:
    for f in ("nvcc", "nvcc.profile", "cudafe++", "fatbinary", "nvlink", "ptxas"):
        touch(root / "bin" / f, f)
    touch(root / "nvvm" / "bin" / "cicc")
    touch(root / "nvvm" / "libdevice" / "libdevice.10.bc")
    touch(root / "targets" / "x86_64-linux" / "include" / "crt" / "host_runtime.h", "CUDA 13")
    touch(root / "targets" / "x86_64-linux" / "include" / "cuda_runtime_api.h", "#define CUDART_VERSION 13000\n")


class Cuda12CheckTest(unittest.TestCase):
    def test_wheel_dirs_and_versions(self):
        with tempfile.TemporaryDirectory() as d:
            prefix = Path(d)
            fake_wheels(prefix)
            self.assertEqual(cc.wheel_dir(prefix, "nvidia-cuda-runtime-cu12"), prefix / "nvidia" / "cuda_runtime")
            self.assertEqual(cc.wheel_dir(prefix, "nvidia-cuda-cccl-cu12"), prefix / "nvidia" / "cuda_cccl")
            self.assertEqual(cc.installed_version(prefix, "nvidia-cuda-nvcc-cu12"), "12.9.86")
            self.assertIsNone(cc.installed_version(prefix / "nvidia", "nvidia-cuda-nvcc-cu12"))

    def test_toolkit_takes_the_compiler_from_cuda13_and_the_rest_from_the_wheels(self):
        with tempfile.TemporaryDirectory() as d:
            prefix, cuda13 = Path(d) / "p", Path(d) / "cuda13"
            fake_wheels(prefix)
            fake_cuda13(cuda13)
            nvcc = cc.make_toolkit(prefix, cuda13)
            tk = prefix / "toolkit"
            self.assertEqual(nvcc, tk / "bin" / "nvcc")
            # nvcc is a copy (it finds its tree from where it is), the rest of the compiler links
            self.assertFalse(nvcc.is_symlink())
            self.assertEqual((tk / "bin" / "cudafe++").resolve(), (cuda13 / "bin" / "cudafe++").resolve())
            self.assertEqual((tk / "bin" / "ptxas").read_text(), "ptxas")
            self.assertTrue((tk / "nvvm" / "bin" / "cicc").exists())
            inc = tk / "include"
            self.assertEqual((inc / "crt" / "host_runtime.h").read_text(), "CUDA 13")
            self.assertIn("12090", (inc / "cuda_runtime_api.h").read_text())
            self.assertTrue((inc / "cub" / "cub.cuh").exists())
            self.assertTrue((inc / "thrust" / "version.h").exists())
            self.assertTrue((inc / "cooperative_groups" / "reduce.h").exists())
            self.assertTrue((inc / "fatbinary_section.h").exists())
            self.assertTrue((inc / "cccl").is_dir())
            self.assertFalse((inc / "__init__.py").exists())
            lib = tk / "lib64"
            self.assertTrue((lib / "libcudart_static.a").exists())
            self.assertEqual((lib / "libcudart.so").resolve(), (lib / "libcudart.so.12").resolve())
            # made again from scratch
            self.assertEqual(cc.make_toolkit(prefix, cuda13), nvcc)

    def test_missing_wheels_or_compiler(self):
        with tempfile.TemporaryDirectory() as d:
            prefix, cuda13 = Path(d) / "p", Path(d) / "cuda13"
            fake_cuda13(cuda13)
            with self.assertRaises(SystemExit):
                cc.make_toolkit(prefix, cuda13)
            fake_wheels(prefix)
            with self.assertRaises(SystemExit):
                cc.make_toolkit(prefix, Path(d) / "none")
            with contextlib.redirect_stderr(io.StringIO()):
                self.assertEqual(cc.main(["--prefix", str(prefix), "--cuda13", str(Path(d) / "none"),
                                          "--toolkit-only"]), 2)
                with self.assertRaises(SystemExit):
                    cc.main(["--version", "13.0"])


if __name__ == "__main__":
    unittest.main()
