from __future__ import annotations

import gc

from matchmaker.data import tune_gc
from matchmaker.data.runtime import YOUNG_THRESHOLD


def test_tune_gc_freezes_startup_objects_and_raises_the_young_threshold() -> None:
    before = gc.get_threshold()
    try:
        tune_gc()
        assert gc.get_threshold()[0] == YOUNG_THRESHOLD
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
