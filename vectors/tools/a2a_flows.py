"""A2A flows (placeholder module replaced below)."""
FLOWS: dict = {}


def build_flows():
    pass
