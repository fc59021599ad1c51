# harness-rl LiveCodeBench test driver. Runs inside the sandbox next to main.py.
#
# Reads its job from job.json (or the file named by argv[1]) (JSON: code, mode, func_name, tests,
# timeout, nonce, float_tol), deletes it, and writes one JSON line per test to the
# original standard output, each carrying the nonce:
#   {"nonce": N, "test": i, "code": 1|-2|-3|-4, "message": ..., "time_ms": ...}
# then {"nonce": N, "done": true}. Codes follow LiveCodeBench: 1 pass, -2 wrong answer,
# -3 time limit exceeded, -4 runtime or compile error; it stops at the first failure.
#
# Each test runs in a forked child (fresh state, its own process group) so that a
# per-test wall-clock limit can kill it whatever it does, os._exit/sys.exit work, and
# real file descriptors 0 and 1 carry the test's input and the program's output
# (input(), sys.stdin, sys.stdin.buffer, open(0), sys.stdout.buffer, os.write(1) all
# behave as on a judge). The parent alone compares outputs; the child never sees the
# report channel. This is a grader, not a security boundary: the sandbox is.
import ast
import io
import json
import numbers
import os
import select
import signal
import sys
import time
from decimal import Decimal, InvalidOperation

HEADER = (
    "from string import *\nfrom re import *\nfrom datetime import *\n"
    "from collections import *\nfrom heapq import *\nfrom bisect import *\n"
    "from copy import *\nfrom math import *\nfrom random import *\n"
    "from statistics import *\nfrom itertools import *\nfrom functools import *\n"
    "from operator import *\nfrom io import *\nfrom sys import *\nfrom json import *\n"
    "from builtins import *\nfrom typing import *\n"
    "import string, re, datetime, collections, heapq, bisect, copy, math, random, "
    "statistics, itertools, functools, operator, io, sys, json\n"
    "sys.setrecursionlimit(50000)\n"
)
MAX_SHOW = 300
MAX_MSG = 64 << 20


def show(s):
    s = s if isinstance(s, str) else repr(s)
    return s if len(s) <= MAX_SHOW else s[:MAX_SHOW] + "...(truncated)"


def lines_of(text):
    return [ln.strip() for ln in text.strip().split("\n")]


def decimals(line):
    try:
        return [Decimal(tok) for tok in line.split()]
    except (InvalidOperation, ValueError):
        return None


def close_enough(a, b, tol):
    if a == b:
        return True
    if tol is None or not a.is_finite() or not b.is_finite():
        return False
    return abs(a - b) <= Decimal(repr(tol)) * max(Decimal(1), abs(b))


def compare_stdin(got, want, tol):
    g, w = lines_of(got), lines_of(want)
    if len(g) != len(w):
        return f"Wrong answer: mismatched output length ({len(g)} lines, expected {len(w)})"
    for k, (a, b) in enumerate(zip(g, w)):
        if a == b:
            continue
        da, db = decimals(a), decimals(b)
        if da is None or db is None or len(da) != len(db):
            return f"Wrong answer at output line {k + 1}"
        if all(close_enough(x, y, tol) for x, y in zip(da, db)):
            continue
        return f"Wrong answer at output line {k + 1}"
    return None


def equal_values(a, b, tol):
    if tol is not None and isinstance(a, float) and isinstance(b, (int, float)) and not isinstance(b, bool):
        return a == b or abs(a - b) <= tol * max(1.0, abs(b))
    if tol is not None and isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(equal_values(x, y, tol) for x, y in zip(a, b))
    if tol is not None and isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(equal_values(a[k], b[k], tol) for k in a)
    return a == b


def normalize(v, depth=0):
    """Tuples to lists (as LiveCodeBench); only values JSON answers can equal pass."""
    if depth > 200:
        raise TypeError("return value nested too deeply")
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, numbers.Integral):
        return int(v)
    if isinstance(v, float):
        return v
    if isinstance(v, (list, tuple)):
        return [normalize(x, depth + 1) for x in v]
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            if not isinstance(k, str):
                raise TypeError(f"dict key of type {type(k).__name__}")
            out[k] = normalize(x, depth + 1)
        return out
    raise TypeError(f"return value of type {type(v).__name__}")


def child(job, code_obj, test, in_path, out_path, wfd):
    os.setpgid(0, 0)
    if hasattr(sys, "set_int_max_str_digits"):
        sys.set_int_max_str_digits(sys.int_info.default_max_str_digits)
    fd_in = os.open(in_path, os.O_RDONLY)
    os.dup2(fd_in, 0)
    fd_out = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(fd_out, 1)
    os.close(fd_in)
    os.close(fd_out)
    sys.stdin = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)), encoding="utf-8")
    out = io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, "w", closefd=False)), encoding="utf-8")
    sys.stdout = out
    msg = {"status": "ok"}
    try:
        ns = {"__name__": "__main__", "__builtins__": __builtins__}
        exec(HEADER, ns)
        if job["mode"] == "stdin":
            try:
                exec(code_obj, ns)
            except SystemExit:
                pass
        else:
            args = [json.loads(line) for line in test["input"].split("\n")]
            exec(code_obj, ns)
            if "class Solution" in job["code"]:
                target = ns["Solution"]()
                method = getattr(target, job["func_name"])
            else:
                method = ns[job["func_name"]]
            value = method(*args)
            if hasattr(sys, "set_int_max_str_digits"):
                sys.set_int_max_str_digits(0)
            try:
                msg["value"] = repr(normalize(value))
            except (TypeError, ValueError, RecursionError) as e:
                msg = {"status": "incomparable", "error": str(e)}
    except BaseException as e:  # noqa: BLE001 - every failure of the program is a result
        msg = {"status": "error", "error": f"{type(e).__name__}: {show(str(e))}"}
    for stream in (sys.stdout, out, sys.__stdout__):
        try:
            stream.flush()
        except BaseException:  # noqa: BLE001 - a closed or replaced stream
            pass
    data = json.dumps(msg).encode()
    view = memoryview(data)
    while view:
        n = os.write(wfd, view)
        view = view[n:]
    os._exit(0)


def cpu_seconds(pid):
    """User + system CPU time of a live process, from /proc (0 when unreadable)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
        fields = stat[stat.rindex(b")") + 2:].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


def run_one(job, code_obj, i, test, report):
    in_path, out_path = f"in_{i}.txt", f"out_{i}.txt"
    with open(in_path, "w", encoding="utf-8") as f:
        f.write(test["input"] if job["mode"] == "stdin" else "")
    rfd, wfd = os.pipe()
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        os.close(rfd)
        os.close(report.fileno())
        child(job, code_obj, test, in_path, out_path, wfd)
    os.close(wfd)
    cpu_clock = job.get("clock") == "cpu"
    # Wall clock (LiveCodeBench): the limit is wall time. CPU clock: the limit is the
    # test process's CPU time, with a wall-clock backstop of 4x the limit + 1 s.
    deadline = start + (4 * job["timeout"] + 1 if cpu_clock else job["timeout"])
    chunks, size, timed_out, status = [], 0, False, None
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            break
        ready, _, _ = select.select([rfd], [], [], min(left, 0.05 if cpu_clock else 0.1))
        if not ready:
            # A grandchild may hold the pipe open after the child ended.
            done, st = os.waitpid(pid, os.WNOHANG)
            if done:
                status = st
                break
            if cpu_clock and cpu_seconds(pid) > job["timeout"]:
                timed_out = True
                break
            continue
        chunk = os.read(rfd, 65536)
        if not chunk:
            break
        size += len(chunk)
        if size > MAX_MSG:
            break
        chunks.append(chunk)
    if timed_out:
        for target in (-pid, pid):
            try:
                os.kill(target, signal.SIGKILL)
            except OSError:
                pass
    if status is None:
        _, status = os.waitpid(pid, 0)
    try:
        os.killpg(pid, signal.SIGKILL)  # grandchildren the program left behind
    except OSError:
        pass
    os.close(rfd)
    elapsed = int((time.monotonic() - start) * 1000)
    res = {"test": i, "time_ms": elapsed}
    if timed_out:
        res.update(code=-3, message="Time Limit Exceeded")
        return res
    try:
        msg = json.loads(b"".join(chunks).decode()) if chunks else None
    except ValueError:
        msg = None
    if msg is None:
        # The child ended without a message: os._exit() after printing (fine for stdin
        # programs that exited 0), or death by a signal or a limit.
        if job["mode"] == "stdin" and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
            msg = {"status": "ok"}
        else:
            why = (f"killed by signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status)
                   else f"exited with status {os.WEXITSTATUS(status)}")
            res.update(code=-4, message=f"Runtime Error: program {why}")
            return res
    if msg.get("status") == "error":
        res.update(code=-4, message="Runtime Error: " + str(msg.get("error")))
        return res
    tol = job.get("float_tol")
    if job["mode"] == "stdin":
        with open(out_path, "rb") as f:
            got = f.read().decode("utf-8", errors="replace")
        os.unlink(out_path)
        why = compare_stdin(got, test["output"], tol)
        if why is not None:
            res.update(code=-2, message=why, output=show(got), expected=show(test["output"]))
            return res
    else:
        want = json.loads(test["output"])
        if msg.get("status") == "incomparable":
            res.update(code=-2, message="Wrong Answer: " + str(msg.get("error")), expected=show(test["output"]))
            return res
        try:
            got = ast.literal_eval(msg["value"])
        except (ValueError, SyntaxError, KeyError, MemoryError, RecursionError):
            got = object()
        if not equal_values(got, want, tol):
            res.update(code=-2, message="Wrong Answer", output=show(msg.get("value", "")),
                       expected=show(test["output"]))
            return res
    res.update(code=1, message="")
    return res


def main():
    if hasattr(sys, "set_int_max_str_digits"):
        sys.set_int_max_str_digits(0)  # literal_eval of big integer answers
    path = sys.argv[1] if len(sys.argv) > 1 else "job.json"
    with open(path, encoding="utf-8") as f:
        job = json.load(f)
    os.unlink(path)
    report = os.fdopen(os.dup(1), "w", encoding="utf-8")
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    nonce = job["nonce"]

    def emit(obj):
        obj["nonce"] = nonce
        report.write(json.dumps(obj) + "\n")
        report.flush()

    try:
        code_obj = compile(job["code"], "<solution>", "exec")
    except (SyntaxError, ValueError, OverflowError, MemoryError, RecursionError) as e:
        emit({"test": 0, "code": -4, "time_ms": 0, "message": f"Compilation Error: {type(e).__name__}: {show(str(e))}"})
        emit({"done": True})
        return
    # Import the header's modules once here: every forked test inherits them, so the
    # per-test `from X import *` costs microseconds, not a fresh import of each module.
    exec(HEADER, {"__name__": "hrl_preload"})
    for i, test in enumerate(job["tests"]):
        res = run_one(job, code_obj, i, test, report)
        emit(res)
        if res["code"] != 1:
            break
    emit({"done": True})


main()
