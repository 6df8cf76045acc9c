"""Shared fixtures: the Qt main window on the offscreen platform."""

from __future__ import annotations

import os
import warnings

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest


def activate(window) -> None:
    """Shortcuts need an active window; the offscreen platform never activates one by itself."""
    from PySide6.QtWidgets import QApplication

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        QApplication.setActiveWindow(window)


@pytest.fixture
def window_factory(qtbot, tmp_path):
    """``make(**kwargs)`` opens a MainWindow with its settings and autosaves in ``tmp_path``."""
    from PySide6.QtCore import QSettings

    from companion.app.advice import rule_of_thumb_advice
    from companion.app.window import MainWindow

    def make(**kwargs):
        kwargs.setdefault("manual", True)
        kwargs.setdefault("settings", QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
        kwargs.setdefault("data_dir", tmp_path / "data")
        kwargs.setdefault("advisor", rule_of_thumb_advice)
        kwargs.setdefault("ask_resume", lambda path: False)
        window = MainWindow(**kwargs)
        qtbot.addWidget(window)
        window.show()
        activate(window)
        return window

    return make
