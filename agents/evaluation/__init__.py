"""Evaluating play: par scores (:mod:`.par`)."""
