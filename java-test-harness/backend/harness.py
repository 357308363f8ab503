"""harness.py: the pieces the task client's checks are made of: the test backend (oap.py, a real grpcio server)
as a child process with its admin interface, JVMs started with the agent, and waiting with deadlines."""
import json
import os
import re
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PY = "/usr/bin/python3"  # Debian's, with grpcio and protobuf


class CheckFailed(AssertionError):
    pass


def check(cond, msg):
    if not cond:
        raise CheckFailed(msg)


def wait_for(pred, timeout, what, step=0.1):
    """Calls pred until it returns something true (returned) or timeout seconds pass (CheckFailed)."""
    end = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() > end:
            raise CheckFailed(f"timed out after {timeout} s waiting for {what}")
        time.sleep(step)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Backend:
    """One oap.py process; extra are its options (--token, --tls-cert, ...)."""

    def __init__(self, work, name, *extra, port=0, state=None):
        self.work = Path(work)
        self.name = name
        self.ready = self.work / f"{name}.ready"
        if self.ready.exists():
            self.ready.unlink()
        args = [PY, str(ROOT / "java-test-harness/backend/oap.py"), "--port", str(port), "--admin-port", "0",
                "--gen", str(ROOT / "build/backend-gen"), "--store", str(self.work / f"{name}-store"),
                "--ready-file", str(self.ready), "--jsampler", str(ROOT / "build/jsampler")]
        if state:
            args += ["--state", str(state)]
        args += list(extra)
        self.err = open(self.work / f"{name}.oap.log", "a")
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=self.err)
        line = wait_for(lambda: self.ready.exists() and self.ready.read_text().strip() or self.dead(), 60,
                        f"the test backend {name} to listen")
        m = re.match(r"READY grpc=(\d+) admin=(\d+)", line)
        check(m, f"test backend {name} did not start (see {self.err.name})")
        self.port, self.admin = int(m.group(1)), int(m.group(2))

    def dead(self):
        if self.proc.poll() is not None:
            raise CheckFailed(f"test backend {self.name} exited with {self.proc.returncode} (see {self.err.name})")
        return None

    def _call(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(f"http://127.0.0.1:{self.admin}{path}", data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return json.loads(r.read())
        except urllib.error.HTTPError as e:
            raise CheckFailed(f"admin {method} {path}: HTTP {e.code} {e.read()[:300]!r}")

    def get(self, path):
        return self._call("GET", path)

    def task(self, service, duration, **kw):
        body = {"service": service, "duration": duration, "force": True}
        body.update(kw)
        return self._call("POST", "/tasks", body)["id"]

    def progress(self, task):
        return self.get(f"/tasks/{task}/progress")

    def logs(self, task, op):
        return [e for e in self.progress(task)["logs"] if e["operationType"] == op]

    def wait_log(self, task, op, timeout, instance=None):
        return wait_for(lambda: [e for e in self.logs(task, op) if instance is None or e["instance"] == instance],
                        timeout, f"{op} on task {task}")

    def uploads(self, task):
        return [u for u in self.get("/uploads") if u["taskId"] == task]

    def pprof_task(self, service, events, instances, duration=0, dump_period=0):
        """A pprof task as the SkyWalking UI creates one (duration in minutes); its id."""
        body = {"service": service, "events": events, "instances": list(instances), "duration": duration,
                "dumpPeriod": dump_period, "force": True}
        return self._call("POST", "/pprof/tasks", body)["id"]

    def pprof_progress(self, task):
        return self.get(f"/pprof/tasks/{task}/progress")

    def pprof_wait_log(self, task, op, timeout, instance=None):
        return wait_for(lambda: [e for e in self.pprof_progress(task)["logs"] if e["operationType"] == op and
                                 (instance is None or e["instance"] == instance)],
                        timeout, f"{op} on pprof task {task}")

    def pprof_uploads(self, task):
        return [u for u in self.get("/pprof/uploads") if u["taskId"] == task]

    def pprof_analysis(self, task):
        return self.get(f"/pprof/tasks/{task}/analysis")

    def instance_seen(self, name):
        return any(i["instance"] == name for i in self.get("/instances"))

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.err.close()


class RawServer:
    """A TCP server on 127.0.0.1 that is not a gRPC server, in this process: "garbage" answers every connection with
    random bytes and closes it; "reset" forwards to 127.0.0.1:upstream and, once, resets the connection (RST) that
    has sent reset_after bytes towards the upstream (no byte past them), then forwards the rest normally."""

    def __init__(self, mode, upstream=None, reset_after=0):
        import threading
        self.mode, self.upstream, self.reset_after = mode, upstream, reset_after
        self.resets = 0
        self.connections = 0
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        import threading
        while not self.closed:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._garbage if self.mode == "garbage" else self._proxy, args=(c,),
                             daemon=True).start()

    def _garbage(self, c):
        try:
            c.settimeout(2)
            try:
                c.recv(4096)
            except OSError:
                pass
            c.sendall(os.urandom(4096))
        except OSError:
            pass
        finally:
            c.close()

    @staticmethod
    def _reset(*socks):
        import struct
        for s_ in socks:
            try:
                s_.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                s_.close()
            except OSError:
                pass

    def _proxy(self, c):
        import threading
        try:
            u = socket.create_connection(("127.0.0.1", self.upstream), timeout=10)
        except OSError:
            c.close()
            return
        u.settimeout(None)

        def pump(src, dst, count):
            """Copies src to dst until EOF (then half-closes dst) or an error; resets both once past reset_after."""
            sent = 0
            try:
                while True:
                    b = src.recv(65536)
                    if not b:
                        break
                    if count and self.resets == 0 and self.reset_after and sent + len(b) >= self.reset_after:
                        # the bytes up to the mark, then the reset: a read that held a whole upload, passed on
                        # before the reset, let the server answer it first (the reset then hit the next poll)
                        dst.sendall(b[:self.reset_after - sent])
                        self.resets += 1
                        self._reset(c, u)
                        return
                    dst.sendall(b)
                    sent += len(b)
            except OSError:
                pass
            try:
                dst.shutdown(socket.SHUT_WR)
            except OSError:
                pass
        back = threading.Thread(target=pump, args=(u, c, False), daemon=True)
        back.start()
        pump(c, u, True)
        back.join(30)
        for s_ in (c, u):
            try:
                s_.close()
            except OSError:
                pass

    def stop(self):
        self.closed = True
        self.sock.close()


class Workspace:
    """What Jvm needs outside the checks (demo-task, benchmarks): the JDK (JAVA_HOME, else the javac on PATH, else
    JDK 17), the agent, a work folder and the classes compiled into it from java-test-harness."""

    def __init__(self, work, sources):
        home = os.environ.get("JAVA_HOME")
        if not home:
            javac = subprocess.run(["sh", "-c", "command -v javac"], capture_output=True, text=True).stdout.strip()
            home = str(Path(os.path.realpath(javac)).parents[1]) if javac else "/usr/lib/jvm/java-17-openjdk-amd64"
        self.java, self.javac = f"{home}/bin/java", f"{home}/bin/javac"
        self.agent = os.environ.get("JSAMPLER_AGENT", str(ROOT / "build/libjsampler.so"))
        self.work = Path(work)
        self.classes = self.work / "classes"
        subprocess.run(["rm", "-rf", str(self.work)], check=True)
        (self.work / "tasks").mkdir(parents=True, mode=0o700)
        subprocess.run([self.javac, "--release", "17", "-d", str(self.classes)] +
                       [str(ROOT / "java-test-harness" / f) for f in sources], check=True)


_SW_ENV = {}


def skywalking_env():
    """The environment every JVM of these checks runs in, as a SkyWalking-instrumented JVM does: SW_AGENT_NAME and
    SW_AGENT_COLLECTOR_BACKEND_SERVICES set, the collector a port where nothing listens. They are defaults only: a
    JVM that asks for no task client must not start one, and options given must win. A check's env= adds to it, a
    value None removes a variable."""
    if not _SW_ENV:
        _SW_ENV.update({"SW_AGENT_NAME": "sw-env-service",
                        "SW_AGENT_COLLECTOR_BACKEND_SERVICES": f"127.0.0.1:{free_port()}"})
    return dict(_SW_ENV)


class Jvm:
    """A JVM running main_args with the agent (agent_opts None: no agent), in skywalking_env() updated by env;
    stdout and stderr kept in files."""

    def __init__(self, ctx, name, agent_opts, main_args, env=None, jvm_args=()):
        self.name = name
        self.out_path = ctx.work / f"{name}.out"
        self.err_path = ctx.work / f"{name}.err"
        cmd = [ctx.java, f"-Djsampler.check={ctx.work}"] + list(jvm_args)  # marks the check's JVMs (cleanup)
        if agent_opts is not None:
            cmd.append(f"-agentpath:{ctx.agent}" + (f"={agent_opts}" if agent_opts else ""))
        cmd += ["-cp", str(ctx.classes)] + [str(a) for a in main_args]
        full_env = dict(os.environ)
        for k in [k for k in full_env if k.startswith("SW_AGENT_")]:
            del full_env[k]
        full_env.update(skywalking_env())
        for k, v in (env or {}).items():
            if v is None:
                full_env.pop(k, None)
            else:
                full_env[k] = v
        (ctx.work / f"{name}.cmd").write_text(" ".join(cmd) + "\n")
        self.out = open(self.out_path, "w")
        self.err = open(self.err_path, "w")
        self.proc = subprocess.Popen(cmd, stdout=self.out, stderr=self.err, env=full_env)
        self.pid = self.proc.pid

    def log(self):
        return self.err_path.read_text(errors="replace")

    def stdout(self):
        return self.out_path.read_text(errors="replace")

    def wait_log(self, pattern, timeout):
        rx = re.compile(pattern)
        return wait_for(lambda: rx.search(self.log()) or self.exited_early(), timeout,
                        f"'{pattern}' in {self.err_path}")

    def exited_early(self):
        if self.proc.poll() is not None:
            raise CheckFailed(f"JVM {self.name} exited with {self.proc.returncode} (see {self.err_path})")
        return None

    def wait_exit(self, timeout):
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise CheckFailed(f"JVM {self.name} still runs after {timeout} s (see {self.err_path})")

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.out.close()
        self.err.close()


def truth(jvm):
    """CpuSplit's measured split of its TRUTH line: {'burnA': share, ...}."""
    m = re.search(r"TRUTH burnA=([\d.]+) burnB=([\d.]+) burnC=([\d.]+)", jvm.stdout())
    check(m, f"no TRUTH line from {jvm.name}")
    return {"burnA": float(m.group(1)), "burnB": float(m.group(2)), "burnC": float(m.group(3))}


def shares_of(elements):
    """Self shares of burnA/B/C among the three, from analysis elements or collapsed lines."""
    total = {"burnA": 0, "burnB": 0, "burnC": 0}
    for sig, self_count in elements:
        for k in total:
            if sig.endswith("." + k):
                total[k] += self_count
    n = sum(total.values())
    check(n > 0, "no samples in burnA/B/C")
    return {k: v / n for k, v in total.items()}, n


def analysis_shares(backend, task):
    a = backend.get(f"/tasks/{task}/analysis?event=EXECUTION_SAMPLE")
    return shares_of((e["codeSignature"], e["self"]) for e in a["elements"]), a


def collapsed_shares(path):
    out = subprocess.run([str(ROOT / "build/jsampler"), "convert", str(path), "-", "--format", "collapsed"],
                         capture_output=True, text=True, check=True).stdout
    rows = []
    for line in out.splitlines():
        stack, _, n = line.rpartition(" ")
        rows.append((stack.split(";")[-1], int(n)))
    return shares_of(rows)


def jfr_tool_events(jfr_tool, path):
    """Number of jdk.ExecutionSample events the JDK's jfr tool reads from path (it must parse)."""
    r = subprocess.run([jfr_tool, "summary", str(path)], capture_output=True, text=True)
    check(r.returncode == 0, f"the JDK's jfr tool cannot read {path}: {r.stderr[:300]}")
    m = re.search(r"jdk\.ExecutionSample\s+(\d+)", r.stdout)
    return int(m.group(1)) if m else 0
