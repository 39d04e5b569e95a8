"""Runs one engine process and measures it: wall time, CPU time and peak RSS of
its whole process tree (Flink's and Spark's JVMs are children of their Python
drivers, and their drivers do not always wait for them, so the tree is sampled
with psutil every 50 ms; the command's own peak RSS from /usr/bin/time and the CPU
time from wait4 are taken when larger)."""
import os
import subprocess
import tempfile
import threading
import time

import psutil


class Measured:
    def __init__(self):
        self.returncode = None
        self.wall_s = 0.0
        self.cpu_s = 0.0
        self.peak_rss_mb = 0.0
        self.stdout = ""
        self.stderr = ""


def run(cmd, env=None, cwd=None, interval=0.05, timeout=None):
    """Runs `cmd` (a list); its output goes to files, not pipes, so that no
    reader wakes during the run it measures."""
    m = Measured()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        # /usr/bin/time reports the command's own peak RSS: wait4's ru_maxrss of a
        # child forked from this (large) Python process counts the pages it had
        # before exec (3.9 GB after preparing 10M events).
        rss_file = tempfile.NamedTemporaryFile("r", suffix=".rss")
        cmd = ["/usr/bin/time", "-f", "%M", "-o", rss_file.name] + list(cmd)
        start = time.time()
        p = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, cwd=cwd)
        cpu = {}  # pid -> (create_time, user + system seconds), last seen
        seen = {}  # pid -> psutil.Process, every process of the tree
        peak = [0]
        done = threading.Event()

        def sample():
            try:
                root = psutil.Process(p.pid)
            except psutil.NoSuchProcess:
                return
            while not done.is_set():
                try:
                    procs = [root] + root.children(recursive=True)
                except psutil.NoSuchProcess:
                    break
                rss = 0
                for q in procs:
                    try:
                        with q.oneshot():
                            rss += q.memory_info().rss
                            t = q.cpu_times()
                            cpu[q.pid] = (q.create_time(), t.user + t.system)
                            seen[q.pid] = q
                    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
                        pass
                peak[0] = max(peak[0], rss)
                done.wait(interval)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        timed_out = False
        while True:
            pid, status, usage = os.wait4(p.pid, os.WNOHANG)
            if pid == p.pid:
                break
            if timeout and time.time() - start > timeout:
                timed_out = True
                _kill_tree(p.pid)
            time.sleep(0.01)
        m.wall_s = time.time() - start
        done.set()
        sampler.join()
        # Children the root did not wait for (a JVM left behind) are ended here.
        for pid_seen, q in seen.items():
            if pid_seen == p.pid:
                continue
            try:
                if q.is_running():
                    q.kill()
            except psutil.NoSuchProcess:
                pass
        m.returncode = -9 if timed_out else os.waitstatus_to_exitcode(status)
        sampled_cpu = sum(c for _, c in cpu.values())
        m.cpu_s = max(sampled_cpu, usage.ru_utime + usage.ru_stime)
        try:
            own_kb = int(rss_file.read().strip().splitlines()[-1])
        except (ValueError, IndexError):
            own_kb = 0
        rss_file.close()
        m.peak_rss_mb = max(peak[0], own_kb * 1024) / 2**20
        out.seek(0)
        err.seek(0)
        m.stdout = out.read()
        m.stderr = err.read()
    return m


def _kill_tree(pid):
    try:
        root = psutil.Process(pid)
        procs = root.children(recursive=True) + [root]
    except psutil.NoSuchProcess:
        return
    for q in procs:
        try:
            q.kill()
        except psutil.NoSuchProcess:
            pass
