"""The engine's state after step ``k``: replayed in the trace layer (gradviz/trace/replay.py).

Kept so that ``gradviz.render._steps`` and ``gradviz.render.replay`` still import.
"""

from gradviz.trace.replay import StepState, Timeline, replay, state_at, states, timeline

__all__ = ["StepState", "Timeline", "replay", "state_at", "states", "timeline"]
