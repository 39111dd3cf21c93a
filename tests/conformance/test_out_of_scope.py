"""Every test a port leaves out is listed with a reason, and none is both left out and ported."""

from __future__ import annotations

import importlib
import inspect
import unittest

import ast
import os

import pytest

from ..paths import ROOT
from .conftest import SOURCES
from .kept_differences import KEPT_DIFFERENCES


@pytest.mark.parametrize("module_name", sorted(SOURCES))
def test_left_out_tests_have_reasons_and_are_not_ported(module_name):
    module = importlib.import_module(f"tests.conformance.{module_name}")
    ported = {f"{cls.__name__}.{name}" for _, cls in inspect.getmembers(module, inspect.isclass)
              if issubclass(cls, unittest.TestCase) for name in dir(cls) if name.startswith("test_")}
    assert ported, f"{module_name} ports no test"
    for name, reason in getattr(module, "OUT_OF_SCOPE", {}).items():
        assert name not in ported, f"{name} is both ported and listed out of scope"
        assert len(reason) >= 20, f"{name}: give the reason it is left out, not a word"


@pytest.mark.parametrize("difference", KEPT_DIFFERENCES, ids=[d[2].rsplit("::", 1)[1] for d in KEPT_DIFFERENCES])
def test_each_kept_difference_names_a_test_that_exists(difference):
    what, why, test = difference
    path, _, name = test.partition("::")
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        functions = {node.name for node in ast.walk(ast.parse(f.read())) if isinstance(node, ast.FunctionDef)}
    assert name in functions, f"{test} does not exist"
    assert len(what) >= 40 and len(why) >= 20
