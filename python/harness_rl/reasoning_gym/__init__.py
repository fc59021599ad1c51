"""A reasoning-gym-compatible front for harness-rl's families: the call names and entry
keys of reasoning-gym's documented API, so a script written against it runs with the
import changed::

    import harness_rl.reasoning_gym as reasoning_gym
    from harness_rl.reasoning_gym.utils import extract_answer
    from harness_rl.reasoning_gym.composite import DatasetSpec

What differs (docs/PYTHON.md has the full list): family names are harness-rl's (54 of
them are reasoning-gym's names too); difficulty is ``level=1..5`` (and question
``variant``), not each generator's own knobs, which raise ``ValueError``; scoring is
strict (1.0 or 0.0: no partial credit for an answer hidden in a longer one); the
instances are harness-rl's, not reasoning-gym's, for the same name and seed.
"""

from .factory import DATASETS, create_dataset, get_score_answer_fn, has_curriculum

__all__ = ["DATASETS", "create_dataset", "get_score_answer_fn", "has_curriculum"]
