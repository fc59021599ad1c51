# harness-rl HumanEval driver. Runs inside the sandbox as main.py; never run it by hand.
#
# Reads its job from job.json (JSON: program, nonce) and deletes it. Executes the program
# (the solution, then the problem's `test`, then `check(<entry_point>)`) with exec() in a
# fresh, empty namespace, as HumanEval's own harness does: `__name__` is not "__main__",
# so an `if __name__ == "__main__":` block in a solution does not run. Standard input is
# empty; standard output and error are discarded. Writes one JSON line carrying the nonce
# to a dup of the original standard output:
#   {"nonce": N, "code": 1 | -2 | -4, "message": ...}
# 1 when check() returns, -2 for an AssertionError (a test of check failed), -4 for a
# syntax error or any other exception (SystemExit included). A program that ends the
# process itself (os._exit) reports nothing, which the grader counts as a failure. Time
# and memory limits are the sandbox's. This is a grader, not a security boundary: the
# program runs in this process, and the sandbox is the boundary.
import json
import os
import sys
import traceback

MAX_SHOW = 300


def show(s):
    return s if len(s) <= MAX_SHOW else s[:MAX_SHOW] + "...(truncated)"


def where(program, tb):
    """`line N: <source>` of the innermost frame of the program, if any."""
    lines = program.split("\n")
    for frame in reversed(traceback.extract_tb(tb)):
        if frame.filename == "<solution>" and frame.lineno and 0 < frame.lineno <= len(lines):
            return f"line {frame.lineno}: {show(lines[frame.lineno - 1].strip())}"
    return ""


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "job.json"
    with open(path, encoding="utf-8") as f:
        job = json.load(f)
    os.unlink(path)
    program, nonce = job["program"], job["nonce"]
    report = os.dup(1)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)

    def emit(code, message):
        data = (json.dumps({"nonce": nonce, "code": code, "message": message}) + "\n").encode()
        view = memoryview(data)
        while view:
            view = view[os.write(report, view):]
        os._exit(0)

    try:
        compiled = compile(program, "<solution>", "exec")
    except (SyntaxError, ValueError, OverflowError, MemoryError, RecursionError) as e:
        at = f" (line {e.lineno})" if isinstance(e, SyntaxError) and e.lineno else ""
        emit(-4, f"Compilation Error: {type(e).__name__}: {show(str(e))}{at}")
    try:
        exec(compiled, {})
    except AssertionError as e:
        detail = where(program, e.__traceback__)
        text = f": {show(str(e))}" if str(e) else ""
        emit(-2, f"Wrong Answer: assertion failed{text}" + (f" at {detail}" if detail else ""))
    except BaseException as e:  # noqa: BLE001 - every failure of the program is a result
        detail = where(program, e.__traceback__)
        emit(-4, f"Runtime Error: {type(e).__name__}: {show(str(e))}" + (f" at {detail}" if detail else ""))
    emit(1, "")


main()
