"""Shared test configuration. Test modules never import each other: what several of them use (the
explicit deals, the two-path interface of engine and vector env, the global-RNG disturber, the
interrupt helpers) lives in the ``helpers`` package beside this file, importable because pytest puts
this folder on ``sys.path`` when it loads this conftest."""
