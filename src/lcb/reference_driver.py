# harness-rl LiveCodeBench driver, reference semantics (`--semantics reference`).
# Runs inside the sandbox next to main.py; never run it by hand.
#
# Reproduces the verdicts of LiveCodeBench's own evaluation (`run_test` inside a
# `multiprocessing.Process` per solution, as `compute_code_generation_metrics` calls it),
# quirks included, for users who must match published numbers. Same job file and report
# protocol as driver.py: one JSON line per reported result, each with the nonce, then
# {"nonce": N, "done": true}. The behaviour reproduced here (docs/ARCHITECTURE.md lists
# every difference from the judge-like driver.py):
#
# - One test process runs every test of the solution in turn (module state and one
#   `Solution` instance are shared by all tests); Python's int/str conversion limit is
#   50,000 digits; a guard replaces destructive functions (os.fork, os.kill, os.remove,
#   os.getcwd, subprocess.Popen, quit, ...) with None and blocks a few imports.
# - Stdin programs: a final `if __name__ == '__main__':` block is unwrapped, imports are
#   hoisted and every other top-level statement becomes the body of one function, run once
#   per test with sys.stdin replaced by a StringIO of the input and print() captured. Names
#   bound at import time by the standard import header (`stdin`, `stdout`, `open`, `quit`)
#   keep the objects they had then.
# - Per-test limit by SIGALRM: the handler prints a line and raises an exception the
#   program can catch; an exception whose repr mentions "TimeoutException" is -3.
# - Exceptions escaping the checks (loading the module, comparing a signalling NaN) turn
#   the whole result into a single -4; a test process that dies or passes the global limit
#   (timeout + 1) * tests + 5 s leaves no result, which LiveCodeBench records as [-2].
import ast
import faulthandler
import io
import json
import os
import select
import signal
import sys
import time
import types
from contextlib import ExitStack
from decimal import Decimal
from unittest import mock

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
INT_DIGITS = 50000
MAX_SHOW = 300
MAX_MSG = 64 << 20


def show(s):
    s = s if isinstance(s, str) else repr(s)
    return s if len(s) <= MAX_SHOW else s[:MAX_SHOW] + "...(truncated)"


# ------------------------------------------------------------------ the test process


class TimeoutException(Exception):
    """Raised in the program by the per-test alarm (the name is what the check looks for)."""


def on_alarm(signum, frame):
    print("alarm: the per-test time limit passed")
    raise TimeoutException


class Clock:
    def __init__(self, seconds):
        self.seconds = seconds

    def arm(self):
        signal.setitimer(signal.ITIMER_REAL, self.seconds)

    @staticmethod
    def disarm():
        signal.setitimer(signal.ITIMER_REAL, 0)


def disable_destructive_functions():
    """The reference's guard: not a security boundary (the sandbox is one), but programs
    that call these functions fail there, so they fail here."""
    import builtins
    import shutil
    import subprocess

    faulthandler.disable()
    builtins.quit = None
    builtins.help = None
    os.environ["OMP_NUM_THREADS"] = "1"
    for name in ("kill", "system", "putenv", "remove", "removedirs", "rmdir", "fchdir",
                 "setuid", "fork", "forkpty", "killpg", "rename", "renames", "truncate",
                 "replace", "unlink", "fchmod", "fchown", "chmod", "chown", "chroot",
                 "lchflags", "lchmod", "lchown", "getcwd", "chdir"):
        setattr(os, name, None)
    shutil.rmtree = shutil.move = shutil.chown = None
    subprocess.Popen = None
    for name in ("ipdb", "joblib", "resource", "psutil", "tkinter"):
        sys.modules[name] = None


def unwrap_main_guard(code):
    """A last top-level `if __name__ == '__main__':` is replaced by its body (any `else`
    is dropped); a guard anywhere else, or written another way, is left alone."""
    try:
        tree = ast.parse(code)
        last = tree.body[-1]
        if isinstance(last, ast.If) and ast.unparse(last.test).strip() == "__name__ == '__main__'":
            code = ast.unparse(tree.body[:-1]) + "\n" + ast.unparse(last.body)
    except Exception:  # noqa: BLE001 - unparsable code is graded as written
        pass
    return code


def wrap_in_function(code):
    """Imports stay at module level after the header; everything else becomes the body of
    `wrapped_function`. Code that does not parse is returned unchanged."""
    try:
        tree = ast.parse(code)
        imports = [s for s in tree.body if isinstance(s, (ast.Import, ast.ImportFrom))]
        rest = [s for s in tree.body if not isinstance(s, (ast.Import, ast.ImportFrom))]
        fn = ast.FunctionDef(
            name="wrapped_function",
            args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
            body=rest,
            decorator_list=[],
            lineno=-1,
        )
        return HEADER + "\n" + ast.unparse(imports) + "\n" + ast.unparse(fn)
    except Exception:  # noqa: BLE001
        return code


def load_solution(code, clock):
    """Execute the module (under the alarm) and return the object to call methods on."""
    clock.arm()
    try:
        module = types.ModuleType("tmp_sol", "")
        exec(code, module.__dict__)
        target = module.Solution() if "class Solution" in code else module
        assert target is not None
    finally:
        clock.disarm()
    return target


def method_of(target, name):
    try:
        assert hasattr(target, name)
        return getattr(target, name)
    except Exception:  # noqa: BLE001
        return None


def failure(results, code, why):
    results.append(code)
    return results, {"message": why}


def timeout_or_error(results, e):
    if "timeoutexception" in repr(e).lower():
        return failure(results, -3, "Time Limit Exceeded")
    return failure(results, -4, f"Runtime Error: {show(repr(e))}")


def grade_functional(code, tests, func_name, clock):
    code = HEADER + "\n\n" + code
    target = load_solution(code, clock)
    if target is None:
        return None
    method = method_of(target, func_name)
    if method is None:
        return None
    all_args = [[json.loads(line) for line in t["input"].split("\n")] for t in tests]
    wants = [json.loads(t["output"]) for t in tests]
    results = []
    for args, want in zip(all_args, wants):
        clock.arm()
        faulthandler.enable()
        try:
            got = method(*args)
            clock.disarm()
            if isinstance(got, tuple):
                got = list(got)
            same = got == want
            results.append(same)
            if not same:
                return results, {"message": "Wrong Answer", "output": show(got)}
        except Exception as e:  # noqa: BLE001
            clock.disarm()
            return timeout_or_error(results, e)
        finally:
            clock.disarm()
            faulthandler.disable()
    return results, {}


class CapturedStdout(list):
    """print() goes to a StringIO while a test runs; its text is appended on exit."""

    def __enter__(self):
        self.saved = sys.stdout
        self.buffer = io.StringIO()
        self.buffer.close = lambda _unused: 1  # close() without an argument raises there too
        sys.stdout = self.buffer
        return self

    def __exit__(self, *exc):
        self.append(self.buffer.getvalue())
        sys.stdout = self.saved


def call_with_input(function, text):
    """Run one test of a wrapped stdin program. The patches are entered in the order the
    reference's stacked decorators enter them: the three method patches land on the
    stdin object of the test process (which names imported from sys at load time still
    hold), then sys.stdin becomes a StringIO, then open() a mock reading the input."""
    lines = iter(text.split("\n"))
    with ExitStack() as stack:
        stack.enter_context(mock.patch("sys.stdin.read", lambda *a: text))
        stack.enter_context(mock.patch("sys.stdin.readlines", lambda *a: text.split("\n")))
        stack.enter_context(mock.patch("sys.stdin.readline", lambda *a: next(lines)))
        stack.enter_context(mock.patch("sys.stdin", io.StringIO(text)))
        stack.enter_context(mock.patch("builtins.open", mock.mock_open(read_data=text)))
        try:
            return function()
        except SystemExit:
            pass


def stripped_lines(text):
    return [line.strip() for line in text.strip().split("\n")]


def as_decimals(line):
    try:
        return [Decimal(tok) for tok in line.split()]
    except Exception:  # noqa: BLE001
        return None


def grade_stdin(code, tests, clock):
    code = wrap_in_function(unwrap_main_guard(code))
    target = load_solution(code, clock)
    if target is None:
        return None
    method = method_of(target, "wrapped_function")
    if method is None:
        return None
    results = []
    for t in tests:
        clock.arm()
        faulthandler.enable()
        with CapturedStdout() as captured:
            try:
                call_with_input(method, t["input"])
                clock.disarm()
            except Exception as e:  # noqa: BLE001
                clock.disarm()
                return timeout_or_error(results, e)
            finally:
                clock.disarm()
                faulthandler.disable()
        got = captured[0]
        g, w = stripped_lines(got), stripped_lines(t["output"])
        if len(g) != len(w):
            return failure(results, -2, "Wrong answer: mismatched output length")
        for k, (a, b) in enumerate(zip(g, w)):
            if a == b:
                continue
            da, db = as_decimals(a), as_decimals(b)
            if da is None or db is None:
                return failure(results, -2, f"Wrong answer at output line {k + 1}")
            # Outside any handler, as in the reference: a signalling NaN raises here.
            if da == db:
                continue
            return failure(results, -2, f"Wrong answer at output line {k + 1}")
        results.append(True)
    return results, {}


def run_all(job):
    """The reference's run_test: returns (results, details)."""
    signal.signal(signal.SIGALRM, on_alarm)
    disable_destructive_functions()
    clock = Clock(job["timeout"])
    tests = job["tests"]
    clock.arm()
    try:
        if job["mode"] == "functional":
            results, details = grade_functional(job["code"], tests, job["func_name"], clock)
        else:
            results, details = grade_stdin(job["code"], tests, clock)
        return results, details
    except Exception as e:  # noqa: BLE001
        return [-4], {"message": f"Error during testing: {show(repr(e))}"}
    finally:
        clock.disarm()


def test_process(job, wfd):
    os.setpgid(0, 0)
    # A multiprocessing child: fd 0 is the evaluator's own (empty) standard input and
    # sys.stdin a separate reader of /dev/null; the evaluator's standard output is fd 1.
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    sys.stdin = open(os.open(os.devnull, os.O_RDONLY), encoding="utf-8", closefd=False)
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8", line_buffering=True)
    if hasattr(sys, "set_int_max_str_digits"):
        sys.set_int_max_str_digits(INT_DIGITS)
    write = os.write
    try:
        results, details = run_all(job)
        codes = []
        for r in results:
            if isinstance(r, int) and not isinstance(r, bool):
                codes.append(r)
                continue
            try:
                codes.append(1 if r else -2)  # True/False, or what a custom __eq__ returned
            except Exception:  # noqa: BLE001
                codes.append(-2)
        data = json.dumps({"codes": codes, "message": str(details.get("message", "")),
                           "output": details.get("output")}).encode()
    except BaseException:  # noqa: BLE001 - the process dies without a result
        os._exit(1)
    view = memoryview(data)
    while view:
        view = view[write(wfd, view):]
    os._exit(0)


# ------------------------------------------------------------------ the supervising driver


def main():
    if hasattr(sys, "set_int_max_str_digits"):
        sys.set_int_max_str_digits(0)
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

    n = len(job["tests"])
    limit = job.get("global_timeout") or (job["timeout"] + 1) * n + 5
    rfd, wfd = os.pipe()
    erfd, ewfd = os.pipe()
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        os.close(rfd)
        os.close(erfd)
        os.close(report.fileno())
        os.dup2(ewfd, 2)
        os.close(ewfd)
        test_process(job, wfd)
    os.close(wfd)
    os.close(ewfd)
    chunks, size, status, timed_out = [], 0, None, False
    open_fds = [rfd, erfd]
    while True:
        left = start + limit - time.monotonic()
        if left <= 0:
            timed_out = True
            break
        ready, _, _ = select.select(open_fds, [], [], min(left, 0.1))
        for fd in ready:
            data = os.read(fd, 1 << 16)
            if not data:
                open_fds.remove(fd)
            elif fd == rfd and size <= MAX_MSG:
                size += len(data)
                chunks.append(data)
        if not open_fds:
            break
        if not ready or rfd not in open_fds:
            done, st = os.waitpid(pid, os.WNOHANG)
            if done:
                status = st
                break
    for target in (-pid, pid):
        try:
            os.kill(target, signal.SIGKILL)
        except OSError:
            pass
    if status is None:
        os.waitpid(pid, 0)
    elapsed = int((time.monotonic() - start) * 1000)
    try:
        got = json.loads(b"".join(chunks).decode()) if chunks and not timed_out else None
    except ValueError:
        got = None
    if not isinstance(got, dict) or not isinstance(got.get("codes"), list) or not got["codes"]:
        why = (f"passed the global limit of {limit:g} s" if timed_out
               else "ended without a result")
        emit({"test": 0, "code": -2, "time_ms": elapsed,
              "message": f"Test runner error: the test process {why}; LiveCodeBench's runner "
                         "records this as a single -2"})
        emit({"done": True})
        return
    codes = got["codes"][:n]
    for i, c in enumerate(codes):
        last = i == len(codes) - 1
        res = {"test": i, "code": c if c in (1, -2, -3, -4) else -4, "time_ms": elapsed if last else 0,
               "message": "" if c == 1 else str(got.get("message", ""))}
        if c != 1 and got.get("output") is not None:
            res["output"] = show(got["output"])
        if c != 1 and i < len(job["tests"]):
            res["expected"] = show(job["tests"][i]["output"])
        emit(res)
        if c != 1:
            break
    emit({"done": True})


main()
