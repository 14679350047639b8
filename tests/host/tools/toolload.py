"""Loads a tool of tools/ (a script without .py suffix) as a module, for the tests."""
from __future__ import annotations

import importlib.machinery
import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def load_tool(name: str, module: str):
    """Execute tools/<name> as the module <module> and return it."""
    loader = importlib.machinery.SourceFileLoader(module, str(ROOT / "tools" / name))
    spec = importlib.util.spec_from_loader(module, loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod
