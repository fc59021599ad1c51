# harness-rl LiveCodeBench test driver. Runs inside the sandbox next to main.py.
#
# Reads its job from job.json (or the file named by argv[1]) (JSON: code, mode, func_name, tests,
# timeout, nonce, float_tol, clock, output_cap), deletes it, and writes one JSON line per
# test to the original standard output, each carrying the nonce:
#   {"nonce": N, "test": i, "code": 1|-2|-3|-4, "message": ..., "time_ms": ...}
# then {"nonce": N, "done": true}. Codes follow LiveCodeBench: 1 pass, -2 wrong answer,
# -3 time limit exceeded, -4 runtime or compile error; it stops at the first failure.
#
# Each test runs in a forked child (fresh state, its own process group) so that a
# per-test wall-clock limit can kill it whatever it does, os._exit/sys.exit work, and
# real file descriptors 0 and 1 carry the test's input and the program's output
# (input(), sys.stdin, sys.stdin.buffer, open(0), sys.stdout.buffer, os.write(1) all
# behave as on a judge). The parent alone compares outputs; the child never sees the
# report channel. Standard error is drained and discarded per test (its tail is kept for
# messages), so only standard output counts against a per-test cap. Python's int/str
# conversion limit is 50,000 digits in every test, as in LiveCodeBench's evaluation.
# This is a grader, not a security boundary: the sandbox is.
import io
import json
import numbers
import os
import select
import signal
import sys
import time
from decimal import Decimal, InvalidOperation
from fractions import Fraction

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
# LiveCodeBench's evaluation raises Python's int/str conversion limit to this many digits
# for the whole run; its test processes inherit it.
INT_DIGITS = 50000
STDERR_TAIL = 2000


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


SNAN_MESSAGE = ("Runtime Error: comparing a signalling NaN (sNaN) raises InvalidOperation "
                "(a runtime error in LiveCodeBench too)")


def close_enough(a, b, tol):
    if a == b:
        return True
    if tol is None or not a.is_finite() or not b.is_finite():
        return False
    return abs(a - b) <= Decimal(repr(tol)) * max(Decimal(1), abs(b))


def compare_stdin(got, want, tol):
    """None when equal, else (code, message): -2, or -4 for a signalling NaN reached in
    the comparison (LiveCodeBench compares the token lists with ==, which raises there)."""
    g, w = lines_of(got), lines_of(want)
    if len(g) != len(w):
        return -2, f"Wrong answer: mismatched output length ({len(g)} lines, expected {len(w)})"
    for k, (a, b) in enumerate(zip(g, w)):
        if a == b:
            continue
        da, db = decimals(a), decimals(b)
        if da is None or db is None or len(da) != len(db):
            return -2, f"Wrong answer at output line {k + 1}"
        for x, y in zip(da, db):
            if x.is_snan() or y.is_snan():
                return -4, SNAN_MESSAGE
            if not close_enough(x, y, tol):
                return -2, f"Wrong answer at output line {k + 1}"
    return None


def equal_values(a, b, tol):
    """Python's == between a returned value and the JSON answer, or with `tol` numbers
    within the tolerance. Raises InvalidOperation when it compares a signalling NaN."""
    if tol is not None and isinstance(a, (float, Fraction, Decimal)) and isinstance(b, (int, float)) \
            and not isinstance(b, bool):
        if a == b:
            return True
        try:
            fa = float(a)
        except (OverflowError, ValueError):
            return False
        return abs(fa - b) <= tol * max(1.0, abs(b))
    if tol is not None and isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(equal_values(x, y, tol) for x, y in zip(a, b))
    if tol is not None and isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(equal_values(a[k], b[k], tol) for k in a)
    return a == b


def encode(v, depth=0):
    """A returned value as tagged JSON the parent can rebuild exactly.

    Kept: None, bool, int (any Integral), float, Fraction (any other Rational), Decimal,
    str, list, tuple, dict; other real numbers become floats. Anything else (sets,
    objects) cannot equal a JSON answer and is refused. Tuples stay tuples: only a
    top-level tuple is turned into a list (LiveCodeBench's rule), so a nested tuple
    does not equal a nested JSON list.
    """
    if depth > 200:
        raise TypeError("return value nested too deeply")
    if v is None or isinstance(v, bool):
        return v
    if isinstance(v, numbers.Integral):
        return {"i": str(int(v))}
    if isinstance(v, float):
        return {"f": repr(float(v))}
    if isinstance(v, Decimal):
        return {"d": str(v)}
    if isinstance(v, numbers.Rational):
        return {"q": [str(int(v.numerator)), str(int(v.denominator))]}
    if isinstance(v, numbers.Real):
        return {"f": repr(float(v))}
    if isinstance(v, str):
        return str.__str__(v)
    if isinstance(v, list):
        return {"l": [encode(x, depth + 1) for x in v]}
    if isinstance(v, tuple):
        return {"t": [encode(x, depth + 1) for x in v]}
    if isinstance(v, dict):
        return {"m": [[encode(k, depth + 1), encode(x, depth + 1)] for k, x in v.items()]}
    raise TypeError(f"return value of type {type(v).__name__}")


def decode(e):
    if e is None or isinstance(e, (bool, str)):
        return e
    (tag, x), = e.items()
    if tag == "i":
        return int(x)
    if tag == "f":
        return float(x)
    if tag == "d":
        return Decimal(x)
    if tag == "q":
        return Fraction(int(x[0]), int(x[1]))
    if tag == "l":
        return [decode(y) for y in x]
    if tag == "t":
        return tuple(decode(y) for y in x)
    if tag == "m":
        return {decode(k): decode(y) for k, y in x}
    raise ValueError(f"unknown tag {tag!r}")


def top_level_list(v):
    """LiveCodeBench turns a returned top-level tuple into a list, and nothing deeper."""
    return list(v) if isinstance(v, tuple) else v


def child(job, code_obj, test, in_path, out_path, wfd, efd):
    os.setpgid(0, 0)
    if hasattr(sys, "set_int_max_str_digits"):
        sys.set_int_max_str_digits(INT_DIGITS)
    fd_in = os.open(in_path, os.O_RDONLY)
    os.dup2(fd_in, 0)
    fd_out = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(fd_out, 1)
    os.dup2(efd, 2)
    os.close(fd_in)
    os.close(fd_out)
    os.close(efd)
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
            value = top_level_list(method(*args))
            if hasattr(sys, "set_int_max_str_digits"):
                sys.set_int_max_str_digits(0)
            try:
                msg["value"] = encode(value)
            except (TypeError, ValueError, RecursionError) as e:
                msg = {"status": "incomparable", "error": str(e)}
    except BaseException as e:  # noqa: BLE001 - every failure of the program is a result
        msg = {"status": "error", "error": f"{type(e).__name__}: {show(str(e))}"}
    for stream in (sys.stdout, out, sys.__stdout__, sys.stderr):
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
    erfd, ewfd = os.pipe()
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        os.close(rfd)
        os.close(erfd)
        os.close(report.fileno())
        child(job, code_obj, test, in_path, out_path, wfd, ewfd)
    os.close(wfd)
    os.close(ewfd)
    os.set_blocking(erfd, False)
    cpu_clock = job.get("clock") == "cpu"
    # Wall clock (LiveCodeBench): the limit is wall time. CPU clock: the limit is the
    # test process's CPU time, with a wall-clock backstop of 4x the limit + 1 s.
    deadline = start + (4 * job["timeout"] + 1 if cpu_clock else job["timeout"])
    chunks, size, timed_out, status = [], 0, False, None
    err_tail, err_open, msg_open = b"", True, True
    next_cpu_check = start
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            break
        fds = ([rfd] if msg_open else []) + ([erfd] if err_open else [])
        ready, _, _ = select.select(fds, [], [], min(left, 0.05 if cpu_clock else 0.1))
        if erfd in ready:
            # Standard error is not compared: drain it, keep its tail for messages.
            try:
                data = os.read(erfd, 1 << 16)
            except BlockingIOError:
                data = None
            if data == b"":
                err_open = False
            elif data:
                err_tail = (err_tail + data)[-STDERR_TAIL:]
        if rfd in ready:
            chunk = os.read(rfd, 65536)
            if not chunk:
                msg_open = False
            else:
                size += len(chunk)
                if size > MAX_MSG:
                    break
                chunks.append(chunk)
        if not msg_open and not err_open:
            break
        # Whether or not the pipes are done: a grandchild may hold them open (and keep
        # writing to stderr) after the child ended. Its message is drained below.
        done, st = os.waitpid(pid, os.WNOHANG)
        if done:
            status = st
            break
        if cpu_clock and time.monotonic() >= next_cpu_check:
            next_cpu_check = time.monotonic() + 0.05
            if cpu_seconds(pid) > job["timeout"]:
                timed_out = True
                break
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
    if msg_open:
        # The child has ended: whatever it wrote is in the pipe.
        os.set_blocking(rfd, False)
        try:
            while size <= MAX_MSG:
                chunk = os.read(rfd, 65536)
                if not chunk:
                    break
                size += len(chunk)
                chunks.append(chunk)
        except BlockingIOError:
            pass
    os.close(rfd)
    os.close(erfd)
    elapsed = int((time.monotonic() - start) * 1000)
    res = {"test": i, "time_ms": elapsed}
    if timed_out:
        res.update(code=-3, message="Time Limit Exceeded")
        return res
    out_size = os.path.getsize(out_path) if os.path.exists(out_path) else 0
    if out_size >= job["output_cap"]:
        os.unlink(out_path)
        res.update(code=-4, message=f"Output Limit Exceeded: more than {job['output_cap'] >> 20} MiB "
                                    "written to standard output in one test")
        return res
    try:
        msg = json.loads(b"".join(chunks).decode()) if chunks else None
    except ValueError:
        msg = None
    if not isinstance(msg, dict):
        msg = None
    if msg is None:
        # The child ended without a message: os._exit() after printing (fine for stdin
        # programs that exited 0), or death by a signal or a limit.
        if job["mode"] == "stdin" and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
            msg = {"status": "ok"}
        else:
            why = (f"killed by signal {os.WTERMSIG(status)}" if os.WIFSIGNALED(status)
                   else f"exited with status {os.WEXITSTATUS(status)}")
            tail = err_tail.decode("utf-8", errors="replace").strip()
            res.update(code=-4, message=f"Runtime Error: program {why}" + (f": {show(tail[-MAX_SHOW:])}" if tail else ""))
            return res
    if msg.get("status") == "error":
        res.update(code=-4, message="Runtime Error: " + str(msg.get("error")))
        return res
    tol = job.get("float_tol")
    if job["mode"] == "stdin":
        with open(out_path, "rb") as f:
            got = f.read().decode("utf-8", errors="replace")
        os.unlink(out_path)
        bad = compare_stdin(got, test["output"], tol)
        if bad is not None:
            res.update(code=bad[0], message=bad[1], output=show(got), expected=show(test["output"]))
            return res
    else:
        os.unlink(out_path)
        want = json.loads(test["output"])
        if msg.get("status") == "incomparable":
            res.update(code=-2, message="Wrong Answer: " + str(msg.get("error")), expected=show(test["output"]))
            return res
        try:
            got = decode(msg["value"])
            same = equal_values(got, want, tol)
        except InvalidOperation:
            res.update(code=-4, message=SNAN_MESSAGE, expected=show(test["output"]))
            return res
        except Exception:  # noqa: BLE001 - a forged or unreadable message is not a pass
            got, same = None, False
        if not same:
            res.update(code=-2, message="Wrong Answer", output=show(got), expected=show(test["output"]))
            return res
    res.update(code=1, message="")
    return res


def main():
    if hasattr(sys, "set_int_max_str_digits"):
        sys.set_int_max_str_digits(0)  # decoding big integer answers
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
