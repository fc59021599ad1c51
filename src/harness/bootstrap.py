# harness-rl program-harness bootstrap. Runs as main.py INSIDE the sandbox (started by
# src/harness/runtime.rs through Sandbox::run_with_channel); never run it by hand.
# It loads harness.py, builds the `question` object from job.json, and calls
#     solve(question, llm, python)
# `llm` and `python` are calls back to the host over the channel whose descriptors
# are in $HRL_CHANNEL_FDS (one JSON object per line each way). The return value of
# solve() is sent back as the final answer. See docs/HARNESS.md.
import json
import os
import sys


def _channel():
    spec = os.environ.pop("HRL_CHANNEL_FDS", "")
    try:
        r, w = (int(x) for x in spec.split(","))
    except ValueError:
        sys.stderr.write("harness bootstrap: no host channel\n")
        os._exit(3)
    os.set_inheritable(r, False)
    os.set_inheritable(w, False)
    return os.fdopen(r, "rb"), w


_READ, _WRITE = _channel()


class LLMError(Exception):
    """An llm() or python() call the host could not serve."""


class LimitExceeded(LLMError):
    """A per-instance limit (llm calls, tokens, tool calls) is used up."""


def _call(message):
    data = (json.dumps(message) + "\n").encode()
    view = memoryview(data)
    while view:
        view = view[os.write(_WRITE, view):]
    line = _READ.readline()
    if not line:
        raise LLMError("the host closed the channel")
    reply = json.loads(line)
    err = reply.get("error")
    if err is not None:
        if err.get("kind") == "limit":
            raise LimitExceeded(err.get("message", "limit"))
        raise LLMError(err.get("message", "error"))
    return reply.get("ok")


class Completion(str):
    """The text of a completion, with its metadata as attributes."""

    finish_reason = "stop"
    prompt_tokens = 0
    completion_tokens = 0
    cached = False


def _completion(d):
    c = Completion(d["text"])
    c.finish_reason = d.get("finish_reason", "stop")
    c.prompt_tokens = d.get("prompt_tokens", 0)
    c.completion_tokens = d.get("completion_tokens", 0)
    c.cached = d.get("cached", False)
    return c


def _request(prompt, system, messages, max_tokens, temperature, top_p, stop, seed):
    if messages is None:
        if not isinstance(prompt, str):
            raise TypeError("llm(): give a prompt string or messages=[...]")
        messages = []
        if system is not None:
            messages.append({"role": "system", "content": str(system)})
        messages.append({"role": "user", "content": prompt})
    else:
        messages = [{"role": str(m["role"]), "content": str(m["content"])} for m in messages]
    req = {"messages": messages, "max_tokens": int(max_tokens), "temperature": float(temperature),
           "top_p": float(top_p), "stop": [str(s) for s in (stop or [])]}
    if seed is not None:
        req["seed"] = int(seed)
    return req


class _LLM:
    """llm(prompt, *, system=None, messages=None, max_tokens=512, temperature=0.0,
    top_p=1.0, stop=None, seed=None) -> Completion; llm.many([...], ...) -> list."""

    def __call__(self, prompt=None, *, system=None, messages=None, max_tokens=512,
                 temperature=0.0, top_p=1.0, stop=None, seed=None):
        req = _request(prompt, system, messages, max_tokens, temperature, top_p, stop, seed)
        return _completion(_call({"op": "llm", "requests": [req]})[0])

    def many(self, prompts, *, system=None, max_tokens=512, temperature=0.0, top_p=1.0,
             stop=None, seed=None):
        reqs = []
        for i, p in enumerate(prompts):
            s = None if seed is None else int(seed) + i
            if isinstance(p, str):
                reqs.append(_request(p, system, None, max_tokens, temperature, top_p, stop, s))
            else:
                reqs.append(_request(None, None, p, max_tokens, temperature, top_p, stop, s))
        if not reqs:
            return []
        return [_completion(d) for d in _call({"op": "llm", "requests": reqs})]


class ToolResult:
    """The result of python(): stdout, stderr, exit_code, timed_out, ok."""

    def __init__(self, d):
        self.stdout = d.get("stdout", "")
        self.stderr = d.get("stderr", "")
        self.exit_code = d.get("exit_code")
        self.timed_out = d.get("timed_out", False)
        self.ok = self.exit_code == 0 and not self.timed_out

    def __repr__(self):
        return "ToolResult(exit_code=%r, timed_out=%r, stdout=%r, stderr=%r)" % (
            self.exit_code, self.timed_out, self.stdout[:200], self.stderr[:200])


def python(code, stdin="", timeout=10.0):
    """Run `code` in a fresh sandboxed interpreter; returns a ToolResult."""
    return ToolResult(_call({"op": "python", "code": str(code), "stdin": str(stdin),
                             "timeout": float(timeout)}))


class Question:
    """The item: see docs/HARNESS.md for every attribute."""

    def __init__(self, d):
        self._d = dict(d)
        for k, v in d.items():
            setattr(self, k, v)

    def __getitem__(self, k):
        return self._d[k]

    def get(self, k, default=None):
        return self._d.get(k, default)

    def keys(self):
        return self._d.keys()

    def __str__(self):
        return self.text

    def __repr__(self):
        return "Question(id=%r, kind=%r)" % (self.id, self.kind)


def main():
    with open("job.json", "rb") as f:
        job = json.load(f)
    os.unlink("job.json")
    sys.path.insert(0, os.getcwd())
    sys.argv = ["harness.py"]
    import harness as module  # noqa: E402  (the harness file, harness.py)
    solve = getattr(module, "solve", None)
    if not callable(solve):
        _call({"op": "final", "error": "harness.py defines no solve(question, llm, python)"})
        sys.exit(2)
    result = solve(Question(job["question"]), _LLM(), python)
    if not isinstance(result, str):
        _call({"op": "final", "error": "solve() returned %s, not str" % type(result).__name__})
        sys.exit(2)
    _call({"op": "final", "answer": result})
    sys.stdout.flush()


main()
