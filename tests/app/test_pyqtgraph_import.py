"""pyqtgraph through :mod:`fxscope.app.pyqtgraph_import`: a new window's process makes only the PySide6
classes used (PySide6 makes a class when it is first asked for; pyqtgraph's own import asked for all of
them), with pyqtgraph's mirrors giving the same classes as PySide6 and PySide6's ``dir()`` intact."""

from __future__ import annotations

from tests.app.window_process import in_window_process

#: run in a new window's process: how many classes each module made
_CLASSES = r"""
import PySide6.QtCore, PySide6.QtGui, PySide6.QtWidgets
import pyqtgraph
from pyqtgraph.Qt import QtCore, QtGui, QtWidgets
modules = (PySide6.QtCore, PySide6.QtGui, PySide6.QtWidgets)
print(json.dumps({
    "made": [sum(isinstance(v, type) for v in m.__dict__.values()) for m in modules],
    "names": [len(dir(m)) for m in modules],
    "same": [QtCore.QPointF is PySide6.QtCore.QPointF, QtGui.QPainterPath is PySide6.QtGui.QPainterPath,
             QtWidgets.QGraphicsObject is PySide6.QtWidgets.QGraphicsObject,
             pyqtgraph.Qt.QtWidgets is QtWidgets],
    "plot": type(pyqtgraph.PlotWidget()).__name__,
}))
"""


def test_a_new_window_makes_a_fraction_of_the_qt_classes():
    seen = in_window_process(_CLASSES)
    assert all(seen["same"]), seen
    assert seen["plot"] == "PlotWidget"
    # dir() lists every name again (hidden only while pyqtgraph copied them): ~250 names in each module
    assert min(seen["names"]) > 150, seen
    # pyqtgraph's copy made each module's every class (all but a few of dir()'s names): now about half or less
    for made, names in zip(seen["made"], seen["names"], strict=True):
        assert made < 0.6 * names, seen
