"""The shared builder of generated functions (kafkalog.generated_code)."""

from __future__ import annotations

import doctest

import pytest

from kafkalog import generated_code
from kafkalog.generated_code import GeneratedSource


def test_module_doctests() -> None:
    assert doctest.testmod(generated_code).failed == 0


def test_names_are_fresh_and_constants_are_bound() -> None:
    src = GeneratedSource({"_base": 10})
    a, b = src.var(), src.var()
    k1, k2 = src.const([1]), src.const([1])
    assert len({a, b, k1, k2}) == 4
    src.emit(1, f"{a} = _base + len({k1})")
    src.emit(1, f"{b} = {a} + len({k2})")
    src.emit(1, "if x:")
    src.emit(2, f"return {b}")
    src.emit(1, "return -1")
    f = src.function("def f(x):", "<test f>")
    assert f(True) == 12 and f(False) == -1
    assert f.__code__.co_filename == "<test f>"


def test_a_syntax_error_names_the_generated_file() -> None:
    src = GeneratedSource()
    src.emit(1, "return (")
    with pytest.raises(SyntaxError) as e:
        src.function("def broken():", "<kafkalog broken v1>")
    assert e.value.filename == "<kafkalog broken v1>"
