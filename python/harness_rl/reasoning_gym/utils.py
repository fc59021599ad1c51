"""``extract_answer`` under reasoning-gym's name, with harness-rl's extraction rule."""

from __future__ import annotations

from typing import Optional

from .. import _native


def extract_answer(completion: str, tag_name: str = "answer", strip: bool = True) -> Optional[str]:
    """The content of the last ``<answer>...</answer>`` pair (tags matched without
    regard to ASCII case; a closing tag with no opening tag of its own inside the pair
    means no answer), stripped; ``None`` without one. Only the ``answer`` tag and
    ``strip=True`` are supported (anything else raises ValueError)."""
    if tag_name != "answer":
        raise ValueError(f"only the `answer` tag is supported, not `{tag_name}`")
    if not strip:
        raise ValueError("the answer is always stripped (strip=False is not supported)")
    return _native.extract_answer(completion)
