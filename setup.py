"""Builds the optional C core of the solver; everything else is configured in pyproject.toml.

The extension is optional: without a compiler the package installs and the solver
falls back to its pure-Python search (companion/solver/core.py).
"""
from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "companion.solver._fastsolve",
            sources=["companion/solver/_fastsolve.c"],
            extra_compile_args=["-O2"],
            optional=True,
        )
    ]
)
