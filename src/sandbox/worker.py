# harness-rl sandbox worker: runs as PID 1 of its own PID namespace inside bubblewrap
# and executes one program per request in a forked child (see src/sandbox/session.rs).
# Protocol on fds 0/1 (moved away at start): u32-LE length + JSON header + blobs.
import builtins
import json
import os
import resource
import select
import signal
import struct
import sys
import time
import traceback
import types

CTL_IN = os.dup(0)
CTL_OUT = os.dup(1)
_null = os.open("/dev/null", os.O_RDWR)
os.dup2(_null, 0)
os.dup2(_null, 1)
os.dup2(_null, 2)
os.close(_null)
WORK = "/work"


def _no_ptrace():
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE = 0
    except Exception:
        pass


def read_exact(n):
    parts = []
    while n:
        b = os.read(CTL_IN, min(n, 1 << 20))
        if not b:
            raise EOFError
        parts.append(b)
        n -= len(b)
    return b"".join(parts)


def send(header, *blobs):
    h = json.dumps(header).encode()
    data = struct.pack("<I", len(h)) + h + b"".join(blobs)
    view = memoryview(data)
    while view:
        view = view[os.write(CTL_OUT, view) :]


def clear_dir(path):
    for entry in os.scandir(path):
        if entry.is_dir(follow_symlinks=False):
            clear_dir(entry.path)
            os.rmdir(entry.path)
        else:
            os.unlink(entry.path)


def reap_everything():
    """Kill every other process of the namespace and reap them (we are its init)."""
    try:
        os.kill(-1, signal.SIGKILL)
    except ProcessLookupError:
        pass
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return
        except InterruptedError:
            continue


def child_main(program, lim, fds):
    stdin_fd, wo, we = fds
    try:
        os.dup2(stdin_fd, 0)
        os.dup2(wo, 1)
        os.dup2(we, 2)
        os.closerange(3, 65536)
        for res, value in (
            (resource.RLIMIT_CPU, (lim["cpu_s"], lim["cpu_s"] + 1)),
            (resource.RLIMIT_AS, (lim["mem_bytes"], lim["mem_bytes"])),
            (resource.RLIMIT_FSIZE, (lim["fsize"], lim["fsize"])),
            (resource.RLIMIT_NOFILE, (lim["nofile"], lim["nofile"])),
            (resource.RLIMIT_NPROC, (lim["nproc"], lim["nproc"])),
        ):
            resource.setrlimit(res, value)
        os.chdir(WORK)
        sys.argv = ["main.py"]
        sys.path[0] = WORK
        main = types.ModuleType("__main__")
        main.__file__ = WORK + "/main.py"
        main.__builtins__ = builtins
        main.__cached__ = None
        sys.modules["__main__"] = main
    except BaseException:
        os._exit(125)
    rc = 0
    try:
        code = compile(program, WORK + "/main.py", "exec")
        exec(code, main.__dict__)
    except SystemExit as e:
        if e.code is None:
            rc = 0
        elif isinstance(e.code, int):
            rc = e.code & 0xFF
        else:
            try:
                print(e.code, file=sys.stderr)
            except BaseException:
                pass
            rc = 1
    except BaseException:
        try:
            etype, value, tb = sys.exc_info()
            # Drop this function's frame: the traceback starts in main.py as it does
            # for `python3 main.py`.
            tb = tb.tb_next if tb is not None else None
            if value is not None:
                value.__traceback__ = tb
            sys.excepthook(etype, value, tb)
        except BaseException:
            pass
        rc = 1
    try:
        import atexit

        atexit._run_exitfuncs()
        if "threading" in sys.modules:
            sys.modules["threading"]._shutdown()
    except BaseException:
        pass
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            if rc == 0:
                rc = 120
    os._exit(rc)


def run_one(hdr):
    program = read_exact(hdr["program"])
    stdin = read_exact(hdr["stdin"])
    files = [(name, read_exact(n)) for name, n in hdr["files"]]
    lim = hdr["limits"]
    clear_dir(WORK)
    clear_dir("/tmp")
    with open(WORK + "/main.py", "wb") as f:
        f.write(program)
    for name, data in files:
        path = os.path.join(WORK, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
    stdin_fd = os.memfd_create("stdin")
    view = memoryview(stdin)
    while view:
        view = view[os.write(stdin_fd, view) :]
    os.lseek(stdin_fd, 0, os.SEEK_SET)
    ro, wo = os.pipe()
    re_, we = os.pipe()
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:
        child_main(program, lim, (stdin_fd, wo, we))
    os.close(wo)
    os.close(we)
    os.close(stdin_fd)
    pidfd = os.pidfd_open(pid)
    deadline = t0 + lim["wall_ms"] / 1000.0
    cap = lim["out_bytes"]
    outs = [bytearray(), bytearray()]
    trunc = [False, False]
    open_fds = {ro: 0, re_: 1}
    status = None
    ru = None
    killed = None
    wall_ms = 0
    while status is None or open_fds:
        # The control pipe too: its owner sends nothing during a run, so it turns
        # readable only at EOF, when the owner is gone (killed): then exit at once, and
        # as PID 1 take every process of the sandbox along.
        watch = list(open_fds) + ([pidfd] if status is None else []) + [CTL_IN]
        if status is None and killed is None:
            timeout = max(0.0, deadline - time.monotonic())
        else:
            timeout = 1.0
        ready, _, _ = select.select(watch, [], [], timeout)
        for fd in ready:
            if fd == CTL_IN:
                os._exit(0)
            if fd == pidfd:
                _, status, ru = os.wait4(pid, 0)
                wall_ms = int((time.monotonic() - t0) * 1000)
                os.close(pidfd)
                reap_everything()
                continue
            data = os.read(fd, 1 << 16)
            if not data:
                os.close(fd)
                del open_fds[fd]
                continue
            i = open_fds[fd]
            room = cap - len(outs[i])
            outs[i] += data[: max(room, 0)]
            if len(data) > room and not trunc[i]:
                trunc[i] = True
                if status is None and killed is None:
                    killed = "output_limit"
                    reap_everything_but(pid)
        if not ready and status is None:
            if killed is None and time.monotonic() >= deadline:
                killed = "timeout"
            reap_everything_but(pid)
    exit_code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else None
    sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
    send(
        {
            "exit_code": exit_code,
            "signal": sig,
            "wall_ms": wall_ms,
            "cpu_ms": int((ru.ru_utime + ru.ru_stime) * 1000),
            "maxrss_kb": ru.ru_maxrss,
            "killed": killed,
            "stdout": len(outs[0]),
            "stderr": len(outs[1]),
            "stdout_truncated": trunc[0],
            "stderr_truncated": trunc[1],
        },
        bytes(outs[0]),
        bytes(outs[1]),
    )


def reap_everything_but(pid):
    """SIGKILL every other process (the run's child included; it is reaped by wait4)."""
    try:
        os.kill(-1, signal.SIGKILL)
    except ProcessLookupError:
        pass


def outside_sandbox():
    """Why this process is NOT inside the sandbox, or None.

    The worker empties /work and /tmp between runs and kills every other process: that
    is only safe as the unprivileged init of a bubblewrap sandbox whose /work is a
    private tmpfs. Run anywhere else (e.g. by hand as root under `unshare -p`), it must
    refuse before touching anything.
    """
    if os.getpid() != 1:
        return "worker must run as PID 1 of its own PID namespace"
    if os.getuid() == 0 or os.geteuid() == 0:
        return "worker refuses to run as root"
    try:
        with open("/proc/self/mountinfo") as f:
            mounts = [line.split() for line in f]
    except OSError:
        return "cannot read /proc/self/mountinfo"
    for path in (WORK, "/tmp"):
        if not any(len(m) > 4 and m[4] == path and "tmpfs" in m[m.index("-") + 1 : m.index("-") + 2] for m in mounts if "-" in m):
            return "worker needs a private tmpfs mounted at " + path
    return None


def main():
    why = outside_sandbox()
    if why is not None:
        send({"error": why})
        return
    _no_ptrace()
    send({"ready": True, "python": sys.version.split()[0]})
    while True:
        try:
            (n,) = struct.unpack("<I", read_exact(4))
            hdr = json.loads(read_exact(n))
        except EOFError:
            return
        run_one(hdr)


main()
