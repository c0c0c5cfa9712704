"""What a message can say about memory, and the languages the detectors know.

Its own module so that the pattern detectors (:mod:`recallmem.signals.detector`) and the
prototype stage (:mod:`recallmem.signals.prototypes`) share it without importing each
other both ways.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

Language = Literal["en", "zh"]


class SignalKind(StrEnum):
    """The four things a message can say about memory."""

    RECALL_CUE = "recall_cue"
    HEDGE = "hedge"
    CORRECTION = "correction"
    REMEMBER_REQUEST = "remember_request"
