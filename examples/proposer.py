#!/usr/bin/env python3
"""An example external proposer for `hrl eval --proposer cmd:python3 examples/proposer.py`.

It speaks the JSON-lines protocol `hrl-proposer/1` (documented in
src/proposer/cmd.rs and docs/EVAL.md): one request per line on stdin, one answer per
line on stdout, logs on stderr. It is a small reflective rule set, not a model: it
reads the failure classes of the execution report and proposes typed edits that
address the most frequent failure, in an order shuffled by the candidate's seed, so
the G candidates of a round differ and a run repeats exactly.

Replace `propose()` with a call to your own model (a GEPA-style optimiser, a TRL
checkpoint in transformers, ...) and keep the protocol loop as it is. Standard library
only.
"""
import json
import random
import sys

PROTOCOL = "hrl-proposer/1"


def edit_options(report, harness_text):
    """Candidate edit lists, most relevant first, from the report's failure rates."""
    agg = (report or {}).get("aggregates", {})
    rates = agg.get("failure_rates", {})
    score = agg.get("score", {}).get("mean", 0.0)
    options = []
    if rates.get("no_answer", 0) + rates.get("bad_format", 0) > 0:
        options.append([{"op": "add_note", "snippet": "tags-required"},
                        {"op": "set_format_rule", "snippet": "tagged-at-end"}])
        options.append([{"op": "add_note", "snippet": "no-example-copy"}])
    if rates.get("truncated", 0) > 0:
        options.append([{"op": "set_sampling", "max_tokens": 1024},
                        {"op": "add_instruction", "snippet": "brief"}])
    if rates.get("wrong", 0) > 0 or score < 0.5:
        if 'kind = "program"' not in harness_text:
            options.append([{"op": "set_strategy", "strategy": {"kind": "program", "repl_print": True}},
                            {"op": "set_format_rule", "snippet": "program-print"},
                            {"op": "add_instruction", "snippet": "no-input"}])
        options.append([{"op": "set_verification", "verification": {"kind": "re-run-on-error", "max_retries": 1}}])
        options.append([{"op": "add_instruction", "snippet": "check-work"}])
    if rates.get("tool_error", 0) + rates.get("timeout", 0) > 0:
        options.append([{"op": "set_verification", "verification": {"kind": "re-run-on-error", "max_retries": 2}},
                        {"op": "add_instruction", "snippet": "print-only-answer"}])
    if not options:
        options.append([{"op": "add_instruction", "snippet": "follow-format"}])
    return options


def propose(request):
    """Return the answer's candidate list for one request."""
    harness = request["harness"]
    if harness["kind"] != "declarative":
        return [{"invalid": "examples/proposer.py revises declarative harnesses only"}]
    options = edit_options(request.get("report"), harness["text"])
    out = []
    for i, seed in enumerate(request["candidate_seeds"]):
        rng = random.Random(seed)
        # The most relevant option first for candidate 0, then seeded variety.
        pick = options[0] if i == 0 else rng.choice(options)
        out.append({"edits": pick})
    return out


def main():
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        request = json.loads(line)
        if request.get("protocol") != PROTOCOL:
            print(f"proposer.py: unknown protocol {request.get('protocol')!r}", file=sys.stderr)
        try:
            candidates = propose(request)
        except Exception as e:  # a bug here must not hang the evaluator
            candidates = [{"invalid": f"examples/proposer.py failed: {e!r}"}]
        answer = {"id": request["id"], "candidates": candidates,
                  "tokens": {"prompt": 0, "completion": 0}}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
