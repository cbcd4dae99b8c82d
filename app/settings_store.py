"""The app's one settings store (QSettings) and the names it is filed under.

A leaf module: the main window, the preferences dialog and the GUI entry point all read settings, and none
of them has to import another for it (``app/gui.py`` builds the main window, so the store cannot live there
without an import cycle).
"""

from __future__ import annotations

#: QSettings organisation and application name: one settings file, ~/.config/fxscope/fxscope.conf on Linux
ORGANIZATION = "fxscope"
APPLICATION = "fxscope"


def settings():
    """The one QSettings store (organisation/application names above, native format per platform)."""
    from PySide6.QtCore import QSettings

    return QSettings(ORGANIZATION, APPLICATION)
