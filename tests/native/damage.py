"""One way to damage well-formed bytes for the kernels' property tests: kept whole, cut short,
one bit flipped, bytes appended, or replaced by arbitrary bytes (which of these a test draws
from is its choice)."""

from __future__ import annotations

from hypothesis import strategies as st


def damaged(draw: st.DrawFn, data: bytes, kinds: tuple[str, ...], random_max: int) -> bytes:
    """``data`` damaged one way of ``kinds`` ("whole", "cut", "flip", "tail", "random")."""
    how = draw(st.sampled_from(kinds))
    if how == "cut":
        return data[:draw(st.integers(0, len(data)))]
    if how == "flip" and data:
        b = bytearray(data)
        b[draw(st.integers(0, len(b) - 1))] ^= 1 << draw(st.integers(0, 7))
        return bytes(b)
    if how == "tail":
        return data + draw(st.binary(min_size=1, max_size=6))
    if how == "random":
        return draw(st.binary(max_size=random_max))
    return data
