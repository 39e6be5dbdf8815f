"""Pieces shared by several test modules (see tests/conftest.py)."""
