"""A settable clock for the web tests (idle expiry, grace periods)."""


class Clock:
    """Returns ``now``, which a test moves by hand."""

    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now
