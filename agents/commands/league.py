def register(subparsers) -> None:
    pass
