#!/usr/bin/env bash
# Prefix-reuse saving: N task instances under one harness (a long system prompt), run
# through `hrl generate` with and without shared-prefix reuse. Reports prompt tokens in
# total, tokens actually computed (total - cached_prompt_tokens), the expected
# prefix + N suffixes, and the wall time of each run.
#
# usage: scripts/bench_prefix_reuse.sh [MODEL]   env: N=16, THREADS=1, MAX_TOKENS=8, NPAR=8
set -euo pipefail
cd "$(dirname "$0")/.."
MODEL=${1:-smollm2-135m}
N=${N:-16}
THREADS=${THREADS:-1}
MAX_TOKENS=${MAX_TOKENS:-8}
NPAR=${NPAR:-8}
HRL=target/release/hrl
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
$HRL tasks gen count_primes --n "$N" --seed 0 --level 2 --out "$dir/instances.jsonl"
python3 - "$dir/instances.jsonl" > "$dir/prompts.jsonl" <<'PY'
import json, sys
harness = ("You are a careful mathematician. Work through the problem step by step. "
           "List every candidate, test each one, and keep a running count. Check the "
           "count a second time before answering. Give only the final number inside "
           "<answer></answer> tags at the end of your reply. Do not include units or "
           "words inside the tags. If the range is empty the answer is 0. Primes are "
           "integers greater than 1 whose only divisors are 1 and themselves.")
for line in open(sys.argv[1]):
    inst = json.loads(line)
    print(json.dumps({"id": inst["id"], "system": harness, "prompt": inst["question"]}))
PY
for mode in reuse no-reuse; do
  flag=(); [ "$mode" = no-reuse ] && flag=(--no-prefix-reuse)
  start=$(date +%s.%N)
  $HRL generate --model "$MODEL" --prompts "$dir/prompts.jsonl" --json --threads "$THREADS" \
    --n-parallel "$NPAR" --max-tokens "$MAX_TOKENS" "${flag[@]}" > "$dir/$mode.jsonl"
  end=$(date +%s.%N)
  python3 - "$dir/$mode.jsonl" "$mode" "$start" "$end" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
total = sum(r["usage"]["prompt_tokens"] for r in rows)
cached = sum(r["usage"]["cached_prompt_tokens"] for r in rows)
print(json.dumps({"mode": sys.argv[2], "n": len(rows), "prompt_tokens": total,
                  "computed": total - cached, "cached": cached,
                  "saving": round(cached / total, 3),
                  "wall_s": round(float(sys.argv[4]) - float(sys.argv[3]), 2)}))
PY
done
python3 - "$dir/reuse.jsonl" "$dir/no-reuse.jsonl" <<'PY'
import json, sys
a = [json.loads(l)["text"] for l in open(sys.argv[1])]
b = [json.loads(l)["text"] for l in open(sys.argv[2])]
print(json.dumps({"same_texts": sum(x == y for x, y in zip(a, b)), "of": len(a)}))
PY
