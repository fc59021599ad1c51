#!/usr/bin/env python3
"""The Python side of scripts/bench_run_vs_python.sh: the protocol of an `hrl run` with
llama-cpp-python, on the prompts `hrl run` sent.

Reads an `hrl run` rollouts.jsonl, and for each rollout (in item order) sends the messages
of its executor call to llama-cpp-python's chat completion on the same GGUF, greedy
(temperature 0), with the same max_tokens and stop strings, one sequence at a time (the
library's high-level API has no cross-request batching). Takes the last <answer> pair as
the answer, as the zero-shot strategy does. Stops after --max-seconds (the rate is then
per item done). Prints one JSON object: items, seconds (generation only, model load
excluded), items/s, and how often the prompt token count, the completion and the
extracted answer equal hrl's.

With --all-calls (multi-call harnesses such as `program`): every executor call of every
rollout is replayed in order, and every tool call the rollout made (the program the
strategy ran) is run with the local `python3` (stdin as recorded, 10 s limit, no sandbox:
cheaper than hrl's, so conservative for hrl). The protocol's later prompts depend on
earlier outputs; replaying hrl's recorded prompts keeps the work identical even where a
completion differs. Counts are then per call (`same_completion` of `calls`).
"""

import argparse
import json
import re
import subprocess
import sys
import time


def last_answer(text):
    found = re.findall(r"<answer>(.*?)</answer>", text, flags=re.S)
    return found[-1].strip() if found else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rollouts", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--ctx", type=int, default=2048)
    ap.add_argument("--max-seconds", type=float, default=1e9)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--version", action="store_true")
    ap.add_argument("--all-calls", action="store_true")
    args = ap.parse_args()

    import llama_cpp

    if args.version:
        print(llama_cpp.__version__)
        return

    rows = [json.loads(line) for line in open(args.rollouts) if line.strip()]
    rows.sort(key=lambda r: r["item_id"])
    if args.limit:
        rows = rows[: args.limit]
    t_load = time.perf_counter()
    llm = llama_cpp.Llama(
        model_path=args.model,
        n_ctx=args.ctx,
        n_batch=512,
        n_threads=args.threads,
        n_threads_batch=args.threads,
        verbose=False,
    )
    load_s = time.perf_counter() - t_load

    done = 0
    calls = tools = 0
    same_prompt_tokens = same_completion = same_answer = 0
    completion_tokens = 0
    start = time.perf_counter()
    for r in rows:
        todo = r["calls"] if args.all_calls else r["calls"][:1]
        text = ""
        for call in todo:
            s = call["sampling"]
            messages = [{"role": m["role"], "content": m["content"]} for m in call["messages"]]
            out = llm.create_chat_completion(
                messages=messages,
                temperature=0.0,
                top_k=1,
                top_p=1.0,
                min_p=0.0,
                max_tokens=s.get("max_tokens") or 512,
                stop=s.get("stop") or None,
                seed=0,
            )
            text = out["choices"][0]["message"]["content"] or ""
            usage = out["usage"]
            completion_tokens += usage["completion_tokens"]
            same_prompt_tokens += usage["prompt_tokens"] == call["prompt_tokens"]
            same_completion += text == call["completion"]
            calls += 1
        if args.all_calls:
            for t in r.get("tools", []):
                try:
                    subprocess.run(
                        ["python3", "-c", t["code"]],
                        input=t.get("stdin") or "",
                        capture_output=True,
                        text=True,
                        timeout=10,
                    )
                except subprocess.TimeoutExpired:
                    pass
                tools += 1
        else:
            same_answer += last_answer(text) == (r.get("extracted") or None)
        done += 1
        if time.perf_counter() - start > args.max_seconds:
            break
    seconds = time.perf_counter() - start
    json.dump(
        {
            "llama_cpp_python": llama_cpp.__version__,
            # The CPU features its llama.cpp was compiled for: pip builds llama.cpp for
            # the machine it runs on (AVX-512 and VNNI here) unless told otherwise,
            # while hrl's default build targets baseline x86-64 with AVX2.
            "system_info": llama_cpp.llama_print_system_info().decode().strip(),
            "items": done,
            "of": len(rows),
            "seconds": round(seconds, 2),
            "load_seconds": round(load_s, 2),
            "items_per_s": done / seconds,
            "calls": calls,
            "tool_runs": tools,
            "completion_tokens": completion_tokens,
            "same_prompt_tokens": same_prompt_tokens,
            "same_completion": same_completion,
            "same_answer": None if args.all_calls else same_answer,
        },
        sys.stdout,
    )
    print()


if __name__ == "__main__":
    main()
