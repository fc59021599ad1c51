"""The corpus of scripts/lcb_differential.sh: LiveCodeBench-format problems and solutions
written for harness-rl to probe where graders disagree.

Every problem is original; expected outputs come from the `solve` functions here, not from
the solutions being graded. Each solution has a name and, when hrl's judge semantics are
expected to give a different result list than LiveCodeBench's reference runner, the id of
the declared difference that explains it (the ids are the rows of the table in docs/LIVECODEBENCH.md,
"Judge and reference semantics"). Solutions without an id must get
identical result lists from the reference runner and from both hrl semantics.

`build()` returns (rows, solutions): rows in the exact code_generation_lite layout.
"""
import json
import random
import textwrap
import sys
from decimal import Decimal
from fractions import Fraction

# The declared differences between hrl's judge semantics and the reference runner.
DIFFERENCES = [
    "wrapped-globals", "main-guard", "module-return", "future-import", "quit",
    "stdio-buffer", "open-fd0", "header-names", "fd-output", "stdout-close",
    "shared-state", "swallowed-timeout", "lost-result", "load-time-limit",
    "guarded-functions", "stdin-class-solution", "timeout-repr", "return-values",
    "single-error-result", "output-cap",
]

PROBLEMS = []
SOLUTIONS = []


def code(text):
    return textwrap.dedent(text).strip("\n") + "\n"


def stdin_problem(pid, inputs, solve, public=1):
    PROBLEMS.append({"id": pid, "func": None, "public": public,
                     "tests": [(i, solve(i)) for i in inputs]})


def fn_problem(pid, func, args_list, solve, public=1):
    tests = []
    for args in args_list:
        tests.append(("\n".join(json.dumps(a) for a in args), json.dumps(solve(*args))))
    PROBLEMS.append({"id": pid, "func": func, "public": public, "tests": tests})


def sol(pid, name, text, differs=None):
    assert differs is None or differs in DIFFERENCES, differs
    SOLUTIONS.append({"question_id": pid, "name": name, "code": code(text), "differs": differs})


R = random.Random("hrl-lcb-differential")
if hasattr(sys, "set_int_max_str_digits"):
    sys.set_int_max_str_digits(0)  # expected outputs with more than 4,300 digits

# ---------------------------------------------------------------- stdin: a + b
sum_inputs = ["3 4\n", "10 -2\n", "0 0\n"] + [f"{R.randint(-10**9, 10**9)} {R.randint(-10**9, 10**9)}\n" for _ in range(3)]
stdin_problem("d_sum", sum_inputs, lambda s: str(sum(int(t) for t in s.split())))
sol("d_sum", "input", """
    a, b = map(int, input().split())
    print(a + b)
""")
sol("d_sum", "readline-alias", """
    import sys
    input = sys.stdin.readline
    a, b = map(int, input().split())
    print(a + b)
""")
sol("d_sum", "read-split", """
    import sys
    print(sum(map(int, sys.stdin.read().split())))
""")
sol("d_sum", "for-line-in-sys-stdin", """
    import sys
    for line in sys.stdin:
        print(sum(map(int, line.split())))
""")
sol("d_sum", "main-guard-last", """
    def main():
        a, b = map(int, input().split())
        print(a + b)

    if __name__ == "__main__":
        main()
""")
sol("d_sum", "main-guard-with-else", """
    def main():
        a, b = map(int, input().split())
        print(a + b)

    if __name__ == "__main__":
        main()
    else:
        print("imported")
""")
sol("d_sum", "main-guard-not-last", """
    def main():
        a, b = map(int, input().split())
        print(a + b)

    if __name__ == "__main__":
        main()
    done = True
""", differs="main-guard")
sol("d_sum", "main-guard-reversed", """
    def main():
        a, b = map(int, input().split())
        print(a + b)

    if "__main__" == __name__:
        main()
""", differs="main-guard")
sol("d_sum", "global-in-helper", """
    total = 0
    def add(x):
        global total
        total += x
    for t in input().split():
        add(int(t))
    print(total)
""", differs="wrapped-globals")
sol("d_sum", "global-at-top-level", """
    global total
    total = 0
    def add(x):
        global total
        total += x
    for t in input().split():
        add(int(t))
    print(total)
""")
sol("d_sum", "closure-nonlocal", """
    def run():
        total = 0
        def add(x):
            nonlocal total
            total += x
        for t in input().split():
            add(int(t))
        print(total)
    run()
""")
sol("d_sum", "module-return", """
    a, b = map(int, input().split())
    print(a + b)
    if a + b != 12345:
        return
    print("unreachable")
""", differs="module-return")
sol("d_sum", "future-import", """
    from __future__ import annotations
    a, b = map(int, input().split())
    print(a + b)
""", differs="future-import")
sol("d_sum", "quit", """
    a, b = map(int, input().split())
    print(a + b)
    quit()
""", differs="quit")
sol("d_sum", "exit", """
    a, b = map(int, input().split())
    print(a + b)
    exit()
""")
sol("d_sum", "sys-exit-status", """
    import sys
    a, b = map(int, input().split())
    print(a + b)
    sys.exit(3)
""")
sol("d_sum", "exit-in-helper", """
    import sys
    def finish(x):
        print(x)
        sys.exit(0)
    a, b = map(int, input().split())
    finish(a + b)
    print("unreachable")
""")
sol("d_sum", "os-exit", """
    import os, sys
    a, b = map(int, input().split())
    print(a + b)
    sys.stdout.flush()
    os._exit(0)
""", differs="lost-result")
sol("d_sum", "stdin-buffer", """
    import sys
    a, b = map(int, sys.stdin.buffer.read().split())
    print(a + b)
""", differs="stdio-buffer")
sol("d_sum", "stdout-buffer", """
    import sys
    a, b = map(int, input().split())
    sys.stdout.buffer.write(str(a + b).encode() + b"\\n")
""", differs="stdio-buffer")
sol("d_sum", "open-0", """
    a, b = map(int, open(0).read().split())
    print(a + b)
""", differs="open-fd0")
sol("d_sum", "bare-stdin-readline", """
    a, b = map(int, stdin.readline().split())
    print(a + b)
""")
sol("d_sum", "bare-stdin-iteration", """
    for line in stdin:
        print(sum(map(int, line.split())))
""", differs="header-names")
sol("d_sum", "from-sys-import-stdin-read", """
    from sys import stdin
    print(sum(map(int, stdin.read().split())))
""")
sol("d_sum", "bare-stdout-write", """
    a, b = map(int, input().split())
    stdout.write(str(a + b) + "\\n")
""", differs="header-names")
sol("d_sum", "sys-stdout-write", """
    import sys
    a, b = map(int, input().split())
    sys.stdout.write(str(a + b) + "\\n")
""")
sol("d_sum", "os-write-fd1", """
    import os
    a, b = map(int, input().split())
    os.write(1, (str(a + b) + "\\n").encode())
""", differs="fd-output")
sol("d_sum", "stdout-close", """
    import sys
    a, b = map(int, input().split())
    print(a + b)
    sys.stdout.close()
""", differs="stdout-close")
sol("d_sum", "stderr-noise", """
    import sys
    a, b = map(int, input().split())
    print("debug:", a, b, file=sys.stderr)
    print(a + b)
""")
sol("d_sum", "print-no-newline", """
    a, b = map(int, input().split())
    print(a + b, end="")
""")
sol("d_sum", "carriage-return", """
    import sys
    a, b = map(int, input().split())
    sys.stdout.write(str(a + b) + "\\r\\n")
""")
sol("d_sum", "getcwd", """
    import os
    os.getcwd()
    a, b = map(int, input().split())
    print(a + b)
""", differs="guarded-functions")
sol("d_sum", "import-resource", """
    import resource
    a, b = map(int, input().split())
    print(a + b)
""", differs="guarded-functions")
sol("d_sum", "class-solution-in-stdin", """
    class Solution:
        def add(self, a, b):
            return a + b
    a, b = map(int, input().split())
    print(Solution().add(a, b))
""", differs="stdin-class-solution")
sol("d_sum", "timeout-in-message", """
    a, b = map(int, input().split())
    if a + b != 7:
        raise ValueError("TimeoutException in my own code")
    print(a + b)
""", differs="timeout-repr")
sol("d_sum", "wrong-sign", """
    a, b = map(int, input().split())
    print(a - b)
""")
sol("d_sum", "extra-line", """
    a, b = map(int, input().split())
    print(a + b)
    print()
    print("done")
""")
sol("d_sum", "read-past-end", """
    a, b = map(int, input().split())
    c = input()
    print(a + b)
""")
sol("d_sum", "runtime-error-second", """
    a, b = map(int, input().split())
    print(a + b if a != 10 else [][0])
""")
sol("d_sum", "syntax-error", """
    a, b = map(int, input().split()
    print(a + b)
""")
sol("d_sum", "shared-module-state", """
    import collections
    collections.hrl_runs = getattr(collections, "hrl_runs", 0) + 1
    a, b = map(int, input().split())
    print(a + b if collections.hrl_runs == 1 else a + b + 1)
""", differs="shared-state")
sol("d_sum", "big-output-stripped", """
    import sys
    a, b = map(int, input().split())
    print(a + b)
    sys.stdout.write(" " * (70 << 20))
""", differs="output-cap")

# ---------------------------------------------------------------- stdin: several lines
def lines_solve(s):
    toks = s.split("\n")
    t = int(toks[0])
    return "\n".join(" ".join(reversed(toks[1 + i].split())) for i in range(t))


line_inputs = ["2\na b c\nhello world\n", "1\nx\n", "3\n1 2\n3 4 5\nsix\n"]
stdin_problem("d_reverse_words", line_inputs, lines_solve)
sol("d_reverse_words", "input-loop", """
    t = int(input())
    for _ in range(t):
        print(" ".join(input().split()[::-1]))
""")
sol("d_reverse_words", "readlines", """
    import sys
    lines = sys.stdin.readlines()
    for line in lines[1:1 + int(lines[0])]:
        print(*line.split()[::-1])
""")
sol("d_reverse_words", "bare-stdin-readline-loop", """
    t = int(stdin.readline())
    for _ in range(t):
        print(" ".join(stdin.readline().split()[::-1]))
""")
sol("d_reverse_words", "bare-readline-drop-newline", """
    t = int(stdin.readline())
    for _ in range(t):
        line = stdin.readline()[:-1]
        print(" ".join(line.split(" ")[::-1]))
""", differs="header-names")
sol("d_reverse_words", "collect-then-print", """
    import sys
    data = sys.stdin.read().split("\\n")
    res = [" ".join(data[i].split()[::-1]) for i in range(1, int(data[0]) + 1)]
    sys.stdout.write("\\n".join(res) + "\\n")
""")
sol("d_reverse_words", "trailing-spaces", """
    t = int(input())
    for _ in range(t):
        print(" ".join(input().split()[::-1]) + "   ")
""")
sol("d_reverse_words", "not-reversed", """
    t = int(input())
    for _ in range(t):
        print(input())
""")
sol("d_reverse_words", "mock-open-name", """
    import io
    data = io.open(0).read().split("\\n")
    for i in range(1, int(data[0]) + 1):
        print(" ".join(data[i].split()[::-1]))
""", differs="open-fd0")

# ---------------------------------------------------------------- stdin: numbers as decimals
def half_solve(s):
    return str(Decimal(int(s)) / 2)


stdin_problem("d_half", ["5\n", "4\n", "-3\n", "0\n"], half_solve)
sol("d_half", "exact", """
    n = int(input())
    print(n // 2 if n % 2 == 0 else n / 2)
""")
sol("d_half", "two-decimals", """
    n = int(input())
    print(f"{n / 2:.2f}")
""")
sol("d_half", "scientific", """
    n = int(input())
    print(f"{n / 2:e}")
""")
sol("d_half", "float-always", """
    print(int(input()) / 2)
""")
sol("d_half", "rounded", """
    print(round(int(input()) / 2))
""")
sol("d_half", "fraction-text", """
    from fractions import Fraction
    print(Fraction(int(input()), 2))
""")
sol("d_half", "nan-text", """
    input()
    print("NaN")
""")
sol("d_half", "snan-text", """
    input()
    print("sNaN")
""")
sol("d_half", "snan-on-third", """
    n = int(input())
    print(n / 2 if n != -3 else "sNaN")
""", differs="single-error-result")
sol("d_half", "hex-text", """
    n = int(input())
    print(hex(n // 2) if n % 2 == 0 else n / 2)
""")

# ---------------------------------------------------------------- stdin: big integers (defect 1)
def big_sum_solve(s):
    a, b = s.split()
    # schoolbook addition of non-negative decimals, independent of int()
    a, b = a[::-1], b[::-1]
    out, carry = [], 0
    for i in range(max(len(a), len(b))):
        d = carry + (int(a[i]) if i < len(a) else 0) + (int(b[i]) if i < len(b) else 0)
        out.append(str(d % 10))
        carry = d // 10
    if carry:
        out.append(str(carry))
    return "".join(reversed(out)).lstrip("0") or "0"


def big_number(r, digits):
    return str(r.randint(1, 9)) + "".join(str(r.randint(0, 9)) for _ in range(digits - 1))


big_inputs = ["12 30\n"] + [f"{big_number(R, d)} {big_number(R, d - 7)}\n" for d in (4301, 6000, 20000)]
stdin_problem("d_big_sum", big_inputs, big_sum_solve)
sol("d_big_sum", "int", """
    a, b = input().split()
    print(int(a) + int(b))
""")
sol("d_big_sum", "int-read", """
    import sys
    print(sum(map(int, sys.stdin.read().split())))
""")
sol("d_big_sum", "int-limit-off", """
    import sys
    sys.set_int_max_str_digits(0)
    a, b = input().split()
    print(int(a) + int(b))
""")
sol("d_big_sum", "int-limit-low", """
    import sys
    sys.set_int_max_str_digits(1000)
    a, b = input().split()
    print(int(a) + int(b))
""")
sol("d_big_sum", "float", """
    a, b = input().split()
    print(int(float(a) + float(b)))
""")


def pow_solve(s):
    return str(2 ** int(s))  # the generator lifts Python's digit limit (see build)


stdin_problem("d_big_pow", ["10\n", "15000\n", "20000\n"], pow_solve)
sol("d_big_pow", "pow", """
    print(2 ** int(input()))
""")
sol("d_big_pow", "shift", """
    print(1 << int(input()))
""")
sol("d_big_pow", "off-by-one", """
    print(2 ** (int(input()) + 1))
""")
sol("d_big_pow", "too-big-for-50000", """
    n = int(input())
    print(2 ** n if n < 100 else 10 ** 60000)
""")

# ---------------------------------------------------------------- stdin: stderr volume (defect 3)
def count_solve(s):
    return str(len(s.split()) - 1)


noise_inputs = [f"{k}\n" + " ".join(str(R.randint(0, 99)) for _ in range(k)) + "\n" for k in (3, 1, 5, 8, 2, 7, 4, 6)]
stdin_problem("d_stderr_volume", noise_inputs, count_solve)
sol("d_stderr_volume", "3-mib-stderr-per-test", """
    import sys
    n = int(input())
    sys.stderr.write(("trace " * 1024 + "\\n") * 512)
    print(n)
""")
sol("d_stderr_volume", "quiet", """
    print(int(input()))
""")
sol("d_stderr_volume", "stderr-only", """
    import sys
    sys.stderr.write(input() + "\\n")
""")

# ---------------------------------------------------------------- stdin: time limits
stdin_problem("d_loop", ["1\n", "2\n"], lambda s: str(int(s) * 2))
sol("d_loop", "fast", """
    print(int(input()) * 2)
""")
sol("d_loop", "spin-on-second", """
    n = int(input())
    while n == 2:
        pass
    print(n * 2)
""")
sol("d_loop", "swallow-alarm-then-print", """
    n = int(input())
    try:
        while n == 2:
            pass
    except BaseException:
        pass
    print(n * 2)
""", differs="swallowed-timeout")
sol("d_loop", "swallow-alarm-forever", """
    n = int(input())
    while n == 2:
        try:
            while True:
                pass
        except BaseException:
            pass
    print(n * 2)
""", differs="swallowed-timeout")
sol("d_loop", "deep-recursion", """
    def depth(k):
        return 0 if k == 0 else 1 + depth(k - 1)
    n = int(input())
    print(depth(20000) // 10000 * n)
""")

# ---------------------------------------------------------------- functional: add (basics)
fn_problem("d_fn_add", "add", [[1, 2], [5, -5], [0, 1], [100, 23]], lambda a, b: a + b)
sol("d_fn_add", "method", """
    class Solution:
        def add(self, a: int, b: int) -> int:
            return a + b
""")
sol("d_fn_add", "module-function", """
    def add(a, b):
        return a + b
""")
sol("d_fn_add", "staticmethod", """
    class Solution:
        @staticmethod
        def add(a, b):
            return sum((a, b))
""")
sol("d_fn_add", "float-result", """
    class Solution:
        def add(self, a, b):
            return float(a + b)
""")
sol("d_fn_add", "bool-and-int", """
    class Solution:
        def add(self, a, b):
            return a + b if a + b != 1 else True
""")
sol("d_fn_add", "string-result", """
    class Solution:
        def add(self, a, b):
            return str(a + b)
""")
sol("d_fn_add", "wrong-name", """
    class Solution:
        def plus(self, a, b):
            return a + b
""")
sol("d_fn_add", "print-noise", """
    class Solution:
        def add(self, a, b):
            print("adding", a, b)
            return a + b
""")
sol("d_fn_add", "raises", """
    class Solution:
        def add(self, a, b):
            return [a][b]
""")
sol("d_fn_add", "sys-exit-in-method", """
    import sys
    class Solution:
        def add(self, a, b):
            sys.exit(0)
""", differs="lost-result")
sol("d_fn_add", "keyboard-interrupt", """
    class Solution:
        def add(self, a, b):
            raise KeyboardInterrupt
""", differs="lost-result")
sol("d_fn_add", "instance-counter", """
    class Solution:
        def __init__(self):
            self.calls = 0
        def add(self, a, b):
            self.calls += 1
            return a + b + (self.calls - 1)
""", differs="shared-state")
sol("d_fn_add", "class-level-cache", """
    class Solution:
        memo = {}
        def add(self, a, b):
            if (a, b) not in self.memo:
                self.memo[(a, b)] = a + b
            return self.memo[(a, b)]
""")
sol("d_fn_add", "slow-module-level", """
    import time
    time.sleep(30)
    class Solution:
        def add(self, a, b):
            return a + b
""", differs="load-time-limit")
sol("d_fn_add", "spin", """
    class Solution:
        def add(self, a, b):
            while True:
                pass
""")
sol("d_fn_add", "swallow-alarm", """
    class Solution:
        def add(self, a, b):
            try:
                while True:
                    pass
            except BaseException:
                return a + b
""", differs="swallowed-timeout")
sol("d_fn_add", "timeout-named-error", """
    class TimeoutException(Exception):
        pass
    class Solution:
        def add(self, a, b):
            raise TimeoutException("mine")
""", differs="timeout-repr")
sol("d_fn_add", "equals-everything", """
    class Anything:
        def __eq__(self, other):
            return True
    class Solution:
        def add(self, a, b):
            return Anything()
""", differs="return-values")
sol("d_fn_add", "numeric-subclass", """
    class Num(int):
        pass
    class Solution:
        def add(self, a, b):
            return Num(a + b)
""")
sol("d_fn_add", "getcwd-in-method", """
    import os
    class Solution:
        def add(self, a, b):
            os.getcwd()
            return a + b
""", differs="guarded-functions")

# ---------------------------------------------------------------- functional: transpose (defect 2)
def transpose(m):
    return [[m[i][j] for i in range(len(m))] for j in range(len(m[0]))]


fn_problem("d_transpose", "transpose",
           [[[[1, 2], [3, 4]]], [[[1, 2, 3]]], [[[5], [6], [7]]]], transpose)
sol("d_transpose", "lists", """
    class Solution:
        def transpose(self, matrix: List[List[int]]) -> List[List[int]]:
            return [list(r) for r in zip(*matrix)]
""")
sol("d_transpose", "zip-tuples", """
    class Solution:
        def transpose(self, matrix):
            return list(zip(*matrix))
""")
sol("d_transpose", "tuple-of-lists", """
    class Solution:
        def transpose(self, matrix):
            return tuple(list(r) for r in zip(*matrix))
""")
sol("d_transpose", "tuple-of-tuples", """
    class Solution:
        def transpose(self, matrix):
            return tuple(zip(*matrix))
""")
sol("d_transpose", "map-object", """
    class Solution:
        def transpose(self, matrix):
            return map(list, zip(*matrix))
""")
sol("d_transpose", "mutates-input", """
    class Solution:
        def transpose(self, matrix):
            out = [list(r) for r in zip(*matrix)]
            matrix.clear()
            return out
""")

# ---------------------------------------------------------------- functional: pairs in a dict
def pairs_solve(words):
    out = {}
    for w in words:
        out[w] = out.get(w, 0) + 1
    return {"counts": out, "first": [words[0], len(words)]}


fn_problem("d_counts", "countWords", [[["a", "b", "a"]], [["x"]], [["p", "q", "q", "q"]]], pairs_solve)
sol("d_counts", "dict", """
    class Solution:
        def countWords(self, words):
            return {"counts": dict(Counter(words)), "first": [words[0], len(words)]}
""")
sol("d_counts", "counter-subclass", """
    class Solution:
        def countWords(self, words):
            return {"counts": Counter(words), "first": [words[0], len(words)]}
""")
sol("d_counts", "nested-tuple", """
    class Solution:
        def countWords(self, words):
            return {"counts": dict(Counter(words)), "first": (words[0], len(words))}
""")
sol("d_counts", "int-keys", """
    class Solution:
        def countWords(self, words):
            return {"counts": {i: 1 for i in range(len(words))}, "first": [words[0], len(words)]}
""")
sol("d_counts", "set-values", """
    class Solution:
        def countWords(self, words):
            return {"counts": dict(Counter(words)), "first": {words[0], len(words)}}
""")

# ---------------------------------------------------------------- functional: exact numbers (defect 4)
def mean_solve(nums):
    total = Fraction(sum(nums), len(nums))
    return float(total)


fn_problem("d_mean", "mean", [[[1, 2, 3, 9]], [[5]], [[1, 2]], [[-3, 4, 4, 5, 0, 1, 2, 3]]], mean_solve)
sol("d_mean", "float", """
    class Solution:
        def mean(self, nums):
            return sum(nums) / len(nums)
""")
sol("d_mean", "fraction", """
    from fractions import Fraction
    class Solution:
        def mean(self, nums):
            return Fraction(sum(nums), len(nums))
""")
sol("d_mean", "decimal", """
    from decimal import Decimal
    class Solution:
        def mean(self, nums):
            return Decimal(sum(nums)) / Decimal(len(nums))
""")
sol("d_mean", "decimal-snan", """
    from decimal import Decimal
    class Solution:
        def mean(self, nums):
            return Decimal("sNaN")
""")
sol("d_mean", "decimal-nan", """
    from decimal import Decimal
    class Solution:
        def mean(self, nums):
            return Decimal("NaN")
""")
sol("d_mean", "floor", """
    class Solution:
        def mean(self, nums):
            return sum(nums) // len(nums)
""")
sol("d_mean", "string", """
    class Solution:
        def mean(self, nums):
            return str(sum(nums) / len(nums))
""")


def third_solve(n):
    return n / 3


fn_problem("d_third", "third", [[1], [2], [7]], third_solve)
sol("d_third", "float", """
    class Solution:
        def third(self, n):
            return n / 3
""")
sol("d_third", "fraction", """
    from fractions import Fraction
    class Solution:
        def third(self, n):
            return Fraction(n, 3)
""")
sol("d_third", "rounded", """
    class Solution:
        def third(self, n):
            return round(n / 3, 6)
""")

# ---------------------------------------------------------------- functional: big integers
fn_problem("d_fn_pow", "power", [[2, 10], [3, 10000], [7, 6000]], lambda b, e: b ** e)
sol("d_fn_pow", "pow", """
    class Solution:
        def power(self, b, e):
            return b ** e
""")
sol("d_fn_pow", "str-of-pow", """
    class Solution:
        def power(self, b, e):
            return str(b ** e)
""")
sol("d_fn_pow", "loop", """
    class Solution:
        def power(self, b, e):
            r = 1
            for _ in range(e):
                r *= b
            return r
""")

# ---------------------------------------------------------------- functional: none and booleans
fn_problem("d_find", "find", [[[1, 2, 3], 2], [[4], 9], [[], 1]],
           lambda xs, x: xs.index(x) if x in xs else None)
sol("d_find", "index-or-none", """
    class Solution:
        def find(self, xs, x):
            return xs.index(x) if x in xs else None
""")
sol("d_find", "minus-one", """
    class Solution:
        def find(self, xs, x):
            return xs.index(x) if x in xs else -1
""")
sol("d_find", "false", """
    class Solution:
        def find(self, xs, x):
            return xs.index(x) if x in xs else False
""")

# ---------------------------------------------------------------- functional: strings
fn_problem("d_rev", "reverse", [["abc"], [""], ["héllo wörld"]], lambda s: s[::-1])
sol("d_rev", "slice", """
    class Solution:
        def reverse(self, s: str) -> str:
            return s[::-1]
""")
sol("d_rev", "list-of-chars", """
    class Solution:
        def reverse(self, s):
            return list(reversed(s))
""")
sol("d_rev", "bytes", """
    class Solution:
        def reverse(self, s):
            return s[::-1].encode()
""")
sol("d_rev", "stdin-style", """
    s = input()
    print(s[::-1])
""")


# ---------------------------------------------------------------- ordinary problems
# Typical contest problems with correct solutions in several styles and typical mistakes;
# both semantics must agree with the reference on all of them.
def kadane_solve(s):
    t = list(map(int, s.split()))
    a = t[1:1 + t[0]]
    return str(max(sum(a[i:j]) for i in range(len(a)) for j in range(i + 1, len(a) + 1)))


kad_inputs = ["5\n-2 1 -3 4 -1\n", "3\n-5 -1 -7\n"] + [
    f"{n}\n" + " ".join(str(R.randint(-20, 20)) for _ in range(n)) + "\n" for n in (1, 8, 30)]
stdin_problem("d_max_subarray", kad_inputs, kadane_solve)
sol("d_max_subarray", "kadane", """
    n = int(input())
    best = cur = None
    for x in map(int, input().split()):
        cur = x if cur is None or cur < 0 else cur + x
        best = cur if best is None else max(best, cur)
    print(best)
""")
sol("d_max_subarray", "prefix-min", """
    import sys
    data = list(map(int, sys.stdin.read().split()))
    a = data[1:1 + data[0]]
    pre, lo, best = 0, 0, -10**18
    for x in a:
        pre += x
        best = max(best, pre - lo)
        lo = min(lo, pre)
    print(best)
""")
sol("d_max_subarray", "empty-allowed", """
    n = int(input())
    best = cur = 0
    for x in map(int, input().split()):
        cur = max(0, cur + x)
        best = max(best, cur)
    print(best)
""")


def gcd_solve(s):
    a, b = map(int, s.split())
    x, y = a, b
    while y:
        x, y = y, x % y
    return f"{x} {a * b // x}"


stdin_problem("d_gcd_lcm", ["12 18\n", "7 13\n", "100 10\n", "1 1\n"], gcd_solve)
sol("d_gcd_lcm", "math", """
    import math
    a, b = map(int, input().split())
    g = math.gcd(a, b)
    print(g, a * b // g)
""")
sol("d_gcd_lcm", "header-names", """
    a, b = map(int, input().split())
    print(gcd(a, b), lcm(a, b))
""")
sol("d_gcd_lcm", "product-as-lcm", """
    a, b = map(int, input().split())
    print(gcd(a, b), a * b)
""")


def pal_solve(s):
    words = s.split()[1:]
    return "\n".join("Yes" if w == w[::-1] else "No" for w in words)


stdin_problem("d_palindrome", ["3\nabba\nabc\nx\n", "2\nlevel\nab\n"], pal_solve)
sol("d_palindrome", "input-strip", """
    for _ in range(int(input())):
        w = input().strip()
        print("Yes" if w == w[::-1] else "No")
""")
sol("d_palindrome", "uppercase", """
    for _ in range(int(input())):
        w = input().strip()
        print("YES" if w == w[::-1] else "NO")
""")
sol("d_palindrome", "readline-keeps-newline", """
    import sys
    for _ in range(int(sys.stdin.readline())):
        w = sys.stdin.readline()
        print("Yes" if w == w[::-1] else "No")
""")


def paths_solve(s):
    rows = s.split()
    h, w = int(rows[0]), int(rows[1])
    g = rows[2:2 + h]
    ways = {}
    for i in range(h):
        for j in range(w):
            if g[i][j] == "#":
                ways[(i, j)] = 0
            elif i == 0 and j == 0:
                ways[(i, j)] = 1
            else:
                ways[(i, j)] = (ways.get((i - 1, j), 0) + ways.get((i, j - 1), 0)) % 1000000007
    return str(ways[(h - 1, w - 1)])


grids = ["2 3\n...\n.#.\n", "3 3\n...\n...\n...\n", "1 1\n.\n"]
for h, w in ((10, 12), (30, 30)):
    grid = ["".join("#" if R.random() < 0.1 and (i, j) not in ((0, 0), (h - 1, w - 1)) else "." for j in range(w)) for i in range(h)]
    grids.append(f"{h} {w}\n" + "\n".join(grid) + "\n")
stdin_problem("d_grid_paths", grids, paths_solve)
sol("d_grid_paths", "dp-rows", """
    import sys
    h, w = map(int, input().split())
    g = [input() for _ in range(h)]
    MOD = 10**9 + 7
    dp = [0] * w
    dp[0] = 1
    for i in range(h):
        for j in range(w):
            if g[i][j] == "#":
                dp[j] = 0
            elif j:
                dp[j] = (dp[j] + dp[j - 1]) % MOD
    print(dp[-1])
""")
sol("d_grid_paths", "memo-recursion", """
    import sys
    from functools import lru_cache
    def main():
        h, w = map(int, sys.stdin.readline().split())
        g = [sys.stdin.readline().strip() for _ in range(h)]
        @lru_cache(maxsize=None)
        def f(i, j):
            if i < 0 or j < 0 or g[i][j] == "#":
                return 0
            if i == 0 and j == 0:
                return 1
            return (f(i - 1, j) + f(i, j - 1)) % (10**9 + 7)
        print(f(h - 1, w - 1))
    main()
""")
sol("d_grid_paths", "no-modulus", """
    h, w = map(int, input().split())
    g = [input() for _ in range(h)]
    dp = [[0] * w for _ in range(h)]
    for i in range(h):
        for j in range(w):
            if g[i][j] == "#":
                continue
            dp[i][j] = 1 if i == j == 0 else (dp[i-1][j] if i else 0) + (dp[i][j-1] if j else 0)
    print(dp[-1][-1])
""")


def sort_solve(s):
    t = s.split()
    return " ".join(str(x) for x in sorted(int(v) for v in t[1:]))


stdin_problem("d_sort", ["4\n3 1 2 3\n", "1\n-5\n", "6\n10 -10 0 5 5 -1\n"], sort_solve)
sol("d_sort", "print-star", """
    input()
    print(*sorted(map(int, input().split())))
""")
sol("d_sort", "join", """
    import sys
    a = sorted(map(int, sys.stdin.read().split()[1:]))
    sys.stdout.write(" ".join(map(str, a)) + "\\n")
""")
sol("d_sort", "one-per-line", """
    input()
    for x in sorted(map(int, input().split())):
        print(x)
""")
sol("d_sort", "descending", """
    input()
    print(*sorted(map(int, input().split()), reverse=True))
""")
sol("d_sort", "as-strings", """
    input()
    print(*sorted(input().split()))
""")


def primes_solve(s):
    n = int(s)
    return str(sum(1 for k in range(2, n + 1) if all(k % d for d in range(2, int(k ** 0.5) + 1))))


stdin_problem("d_primes", ["10\n", "2\n", "1\n", "20000\n"], primes_solve)
sol("d_primes", "sieve", """
    n = int(input())
    sieve = bytearray([1]) * (n + 1)
    sieve[:2] = b"\\x00\\x00"[:min(2, n + 1)]
    for i in range(2, int(n ** 0.5) + 1):
        if sieve[i]:
            sieve[i * i::i] = bytearray(len(sieve[i * i::i]))
    print(sum(sieve))
""")
sol("d_primes", "strictly-below", """
    n = int(input())
    print(sum(1 for k in range(2, n) if all(k % d for d in range(2, int(k ** 0.5) + 1))))
""")
sol("d_primes", "hopeless-brute-force", """
    n = int(input())
    count = 0
    for k in range(2, n + 1):
        if all(k % d for d in range(2, k)):
            count += 1
    for _ in range(10 ** 9 if n > 100 else 0):
        pass
    print(count)
""")


def div_solve(s):
    a, b = map(int, s.split())
    return f"{a / b:.6f}"


stdin_problem("d_divide", ["1 3\n", "10 4\n", "-7 2\n"], div_solve)
sol("d_divide", "format-6", """
    a, b = map(int, input().split())
    print(f"{a / b:.6f}")
""")
sol("d_divide", "repr-float", """
    a, b = map(int, input().split())
    print(a / b)
""")
sol("d_divide", "format-10", """
    a, b = map(int, input().split())
    print(f"{a / b:.10f}")
""")
sol("d_divide", "percent-format", """
    a, b = map(int, input().split())
    print("%.6f" % (a / b))
""")


def queries_solve(s):
    t = list(map(int, s.split()))
    n, q = t[0], t[1]
    a = t[2:2 + n]
    out = []
    for k in range(q):
        l, r = t[2 + n + 2 * k], t[3 + n + 2 * k]
        out.append(str(sum(a[l - 1:r])))
    return "\n".join(out)


def queries_input(r, n, q):
    a = [r.randint(-100, 100) for _ in range(n)]
    qs = []
    for _ in range(q):
        lo = r.randint(1, n)
        qs.append(f"{lo} {r.randint(lo, n)}")
    return f"{n} {q}\n" + " ".join(map(str, a)) + "\n" + "\n".join(qs) + "\n"


stdin_problem("d_range_sum", ["3 2\n1 2 3\n1 2\n2 3\n"] + [queries_input(R, n, q) for n, q in ((10, 10), (2000, 2000))], queries_solve)
sol("d_range_sum", "prefix-sums", """
    import sys
    from itertools import accumulate
    data = sys.stdin.buffer.read().split() if hasattr(sys.stdin, "buffer") else sys.stdin.read().split()
    n, q = int(data[0]), int(data[1])
    pre = [0] + list(accumulate(map(int, data[2:2 + n])))
    out = []
    for k in range(q):
        l, r = int(data[2 + n + 2 * k]), int(data[3 + n + 2 * k])
        out.append(pre[r] - pre[l - 1])
    print("\\n".join(map(str, out)))
""")
sol("d_range_sum", "slicing", """
    n, q = map(int, input().split())
    a = list(map(int, input().split()))
    for _ in range(q):
        l, r = map(int, input().split())
        print(sum(a[l - 1:r]))
""")
sol("d_range_sum", "off-by-one", """
    n, q = map(int, input().split())
    a = list(map(int, input().split()))
    for _ in range(q):
        l, r = map(int, input().split())
        print(sum(a[l:r]))
""")

fn_problem("d_two_sum", "twoSum", [[[2, 7, 11, 15], 9], [[3, 2, 4], 6], [[1, 5, 3, 7], 10]],
           lambda nums, target: next([i, j] for j in range(len(nums)) for i in range(j) if nums[i] + nums[j] == target))
sol("d_two_sum", "dict", """
    class Solution:
        def twoSum(self, nums: List[int], target: int) -> List[int]:
            seen = {}
            for j, x in enumerate(nums):
                if target - x in seen:
                    return [seen[target - x], j]
                seen[x] = j
""")
sol("d_two_sum", "tuple", """
    class Solution:
        def twoSum(self, nums, target):
            for j in range(len(nums)):
                for i in range(j):
                    if nums[i] + nums[j] == target:
                        return i, j
""")
sol("d_two_sum", "reversed-order", """
    class Solution:
        def twoSum(self, nums, target):
            seen = {}
            for j, x in enumerate(nums):
                if target - x in seen:
                    return [j, seen[target - x]]
                seen[x] = j
""")
sol("d_two_sum", "forgets-return", """
    class Solution:
        def twoSum(self, nums, target):
            seen = {}
            for j, x in enumerate(nums):
                if target - x in seen:
                    ans = [seen[target - x], j]
                seen[x] = j
""")


def valid_solve(s):
    while "()" in s or "[]" in s or "{}" in s:
        s = s.replace("()", "").replace("[]", "").replace("{}", "")
    return s == ""


fn_problem("d_brackets", "isValid", [["()[]{}"], ["(]"], ["([{}])"], [""], ["(("], ["([)]"]], valid_solve)
sol("d_brackets", "stack", """
    class Solution:
        def isValid(self, s: str) -> bool:
            pairs = {")": "(", "]": "[", "}": "{"}
            st = []
            for c in s:
                if c in pairs:
                    if not st or st.pop() != pairs[c]:
                        return False
                else:
                    st.append(c)
            return not st
""")
sol("d_brackets", "returns-int", """
    class Solution:
        def isValid(self, s):
            pairs = {")": "(", "]": "[", "}": "{"}
            st = []
            for c in s:
                if c in pairs:
                    if not st or st.pop() != pairs[c]:
                        return 0
                else:
                    st.append(c)
            return int(not st)
""")
sol("d_brackets", "counts-only", """
    class Solution:
        def isValid(self, s):
            return all(s.count(a) == s.count(b) for a, b in ("()", "[]", "{}"))
""")
sol("d_brackets", "string-true", """
    class Solution:
        def isValid(self, s):
            return "true"
""")


def groups_solve(words):
    g = {}
    for w in words:
        g.setdefault("".join(sorted(w)), []).append(w)
    return sorted(sorted(v) for v in g.values())


fn_problem("d_groups", "groupAnagrams", [[["eat", "tea", "tan", "ate", "nat", "bat"]], [["a"]], [["ab", "ba", "abc"]]], groups_solve)
sol("d_groups", "sorted-groups", """
    class Solution:
        def groupAnagrams(self, words):
            g = defaultdict(list)
            for w in words:
                g[tuple(sorted(w))].append(w)
            return sorted(sorted(v) for v in g.values())
""")
sol("d_groups", "unsorted", """
    class Solution:
        def groupAnagrams(self, words):
            g = defaultdict(list)
            for w in words:
                g[tuple(sorted(w))].append(w)
            return list(g.values())
""")
sol("d_groups", "dict-values-view", """
    class Solution:
        def groupAnagrams(self, words):
            g = defaultdict(list)
            for w in sorted(words):
                g[tuple(sorted(w))].append(w)
            return sorted(g.values())
""")


fn_problem("d_kth", "kthLargest", [[[3, 2, 1, 5, 6, 4], 2], [[1], 1], [[7, 7, 7], 3]], lambda a, k: sorted(a)[-k])
sol("d_kth", "heapq", """
    import heapq
    class Solution:
        def kthLargest(self, nums, k):
            return heapq.nlargest(k, nums)[-1]
""")
sol("d_kth", "header-heap", """
    class Solution:
        def kthLargest(self, nums, k):
            h = []
            for x in nums:
                heappush(h, x)
                if len(h) > k:
                    heappop(h)
            return h[0]
""")
sol("d_kth", "kth-smallest", """
    class Solution:
        def kthLargest(self, nums, k):
            return sorted(nums)[k - 1]
""")


def fib_solve(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


fn_problem("d_fib", "fib", [[10], [0], [90]], fib_solve)
sol("d_fib", "module-cache", """
    from functools import lru_cache
    @lru_cache(maxsize=None)
    def f(n):
        return n if n < 2 else f(n - 1) + f(n - 2)
    class Solution:
        def fib(self, n: int) -> int:
            return f(n)
""")
sol("d_fib", "iterative", """
    class Solution:
        def fib(self, n):
            a, b = 0, 1
            for _ in range(n):
                a, b = b, a + b
            return a
""")
sol("d_fib", "exponential", """
    class Solution:
        def fib(self, n):
            return n if n < 2 else self.fib(n - 1) + self.fib(n - 2)
""")
sol("d_fib", "init-needs-argument", """
    class Solution:
        def __init__(self, memo):
            self.memo = memo
        def fib(self, n):
            return n
""")
sol("d_fib", "generator", """
    class Solution:
        def fib(self, n):
            a, b = 0, 1
            for _ in range(n):
                yield a
                a, b = b, a + b
""")
sol("d_fib", "float-binet", """
    class Solution:
        def fib(self, n):
            phi = (1 + 5 ** 0.5) / 2
            return round(phi ** n / 5 ** 0.5)
""")


fn_problem("d_point_one", "addTenths", [[1, 2], [3, 4], [0, 5]], lambda a, b: round((a + b) / 10, 10))
sol("d_point_one", "exact-division", """
    class Solution:
        def addTenths(self, a, b):
            return (a + b) / 10
""")
sol("d_point_one", "float-sum", """
    class Solution:
        def addTenths(self, a, b):
            return a / 10 + b / 10
""")
sol("d_point_one", "decimal", """
    from decimal import Decimal
    class Solution:
        def addTenths(self, a, b):
            return Decimal(a + b) / 10
""")

def build():
    rows = []
    for k, p in enumerate(PROBLEMS):
        testtype = "functional" if p["func"] else "stdin"
        cases = [{"input": i, "output": o, "testtype": testtype} for i, o in p["tests"]]
        rows.append({
            "question_title": p["id"],
            "question_content": f"Differential-test problem {p['id']}.",
            "platform": "leetcode" if p["func"] else ("atcoder" if k % 2 else "codeforces"),
            "question_id": p["id"],
            "contest_id": "hrl-differential",
            "contest_date": f"2024-01-{k % 28 + 1:02d}T00:00:00",
            "starter_code": f"class Solution:\n    def {p['func']}(self):\n        " if p["func"] else "",
            "difficulty": ("easy", "medium", "hard")[k % 3],
            "public_test_cases": json.dumps(cases[:p["public"]]),
            "private_test_cases": json.dumps(cases[p["public"]:]),
            "metadata": json.dumps({"func_name": p["func"]} if p["func"] else {}),
        })
    return rows, SOLUTIONS


if __name__ == "__main__":
    rows, sols = build()
    print(f"{len(rows)} problems, {len(sols)} solutions")
