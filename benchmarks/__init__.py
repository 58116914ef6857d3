"""The pytest-benchmark suite (a package so its conftest has its own module name)."""

__all__: list[str] = []
