"""A short training-data script written against reasoning-gym's documented API
(reasoning-gym 0.1.25: README and composite docs). It runs unchanged against
reasoning-gym itself (scripts/compare_python_rg.sh runs it so) and, with the import
lines changed, against harness_rl.reasoning_gym (tests/test_rg_shim.py)."""

import reasoning_gym
from reasoning_gym.composite import DatasetSpec
from reasoning_gym.utils import extract_answer

data = reasoning_gym.create_dataset("basic_arithmetic", size=10, seed=42)
assert len(data) == 10
for i, x in enumerate(data):
    print(f'{i}: q="{x["question"][:60]}", a="{x["answer"]}"')
    print("metadata:", sorted(x["metadata"])[:3])
    # use the dataset's `score_answer` method for algorithmic verification
    assert data.score_answer(answer=x["answer"], entry=x) == 1.0
    assert x["metadata"]["source_dataset"] == "basic_arithmetic"
    assert x["metadata"]["source_index"] == i

completion = f"Let me think step by step.\n<answer>{data[3]['answer']}</answer>"
answer = extract_answer(completion)
assert data.score_answer(answer, data[3]) == 1.0
assert data.score_answer(None, data[3]) == 0.0
assert extract_answer("no tags here") is None

score_fn = reasoning_gym.get_score_answer_fn("count_primes")
primes = reasoning_gym.create_dataset("count_primes", size=5, seed=1)
assert all(score_fn(e["answer"], e) == 1.0 for e in primes)

specs = [
    DatasetSpec(name="basic_arithmetic", weight=2, config={}),
    DatasetSpec(name="count_primes", weight=1, config={}),
]
mixed = reasoning_gym.create_dataset("composite", size=30, seed=7, datasets=specs)
assert len(mixed) == 30
sources = set()
for x in mixed:
    sources.add(x["metadata"]["source_dataset"])
    assert mixed.score_answer(x["answer"], x) == 1.0
assert sources == {"basic_arithmetic", "count_primes"}, sources
print("ok")
