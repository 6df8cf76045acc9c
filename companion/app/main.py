"""Start the app: QApplication, the main window first, everything heavy later."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional, Sequence

from companion.rules import Rules


def run_app(*, source: Optional[str] = None, rules: Optional[str] = None, manual: Optional[bool] = None,
            data_dir: Optional[Path] = None, argv: Sequence[str] = ()) -> int:
    from PySide6.QtWidgets import QApplication

    from companion.app.window import MainWindow

    app = QApplication.instance() or QApplication([sys.argv[0], *argv])
    app.setOrganizationName("PyramidCompanion")
    app.setApplicationName("Pyramid Companion")
    window = MainWindow(rules=Rules.parse(rules) if rules else None, source=source, manual=manual,
                        data_dir=data_dir)
    window.show()
    return app.exec()
