"""Agents for Manni: one policy interface for every player (see :mod:`agents.base`)."""
