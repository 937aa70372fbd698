# tests/integration/subreaper.py: moat run under a child subreaper that
# reaps nothing on its own, so that whatever moat leaves (its processes,
# zombies included: under a container's pid 1 that reaps nothing they would
# pile up) is reparented here and named. Used by lifecycle.sh.
import ctypes
import os
import signal
import subprocess
import time


def become():
    ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER


def left():
    """'comm:state' of each process that is now our child, sorted; '' if none"""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            st = open("/proc/%s/stat" % d).read()
        except OSError:
            continue
        f = st.rsplit(")", 1)[1].split()
        if int(f[1]) == os.getpid():
            out.append(st.split(" (", 1)[1].split(")")[0] + ":" + f[0])
    return " ".join(sorted(out))


def reap():
    while True:
        try:
            if os.waitpid(-1, os.WNOHANG)[0] == 0:
                return
        except ChildProcessError:
            return


def run(argv, term_after=None, quiet=False):
    """argv to its end (SIGTERM after term_after s if given), then 0.3 s for
    stragglers: (its status, what was left), the leftovers reaped after"""
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL if quiet else None)
    if term_after is not None:
        time.sleep(term_after)
        p.send_signal(signal.SIGTERM)
    p.wait()
    time.sleep(0.3)
    lf = left()
    reap()
    return p.returncode, lf


def kids(pid):
    """pid's children (those of its main thread), [] once it is gone"""
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def free_port(listen=False):
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    if listen:
        s.listen()
        return s, s.getsockname()[1]
    port = s.getsockname()[1]
    s.close()
    return None, port
