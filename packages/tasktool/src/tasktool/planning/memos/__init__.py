"""What planning derives from the tasks, kept between runs beside the other caches: the
derived memos (``next``, ``stats``, ``validate``) and the overlay's verdict.
"""

__all__ = []
