"""Agents for Manni: one policy interface for every player (see :mod:`manni_agents.base`)."""
