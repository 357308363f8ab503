"""oap.py: a small stand-in for an Apache SkyWalking OAP server, for testing jsampler's backend client.

It speaks the gRPC services jsampler uses, built from the protos in <repo>/proto:

  skywalking.v3.ManagementService    keepAlive / reportInstanceProperties: remembers the instances
  skywalking.v10.AsyncProfilerTask   getAsyncProfilerTaskCommands: hands out profiling tasks the way
                                     the OAP does; collect: receives the JFR recordings
  skywalking.v10.PprofTask           pprof tasks and profiles as the OAP's receiver-pprof module takes them
                                     (oap_pprof.py; --no-pprof leaves it out, as an OAP without that module)

and a JSON admin interface over HTTP/1.1, where a test creates tasks and reads back what the agents
did (polls, task logs, uploaded files, a call tree merged from the uploads by `jsampler convert`).

Run it with the system Python, which has grpcio, grpcio-tools and protobuf:

    /usr/bin/python3 java-test-harness/backend/oap.py [--port 0] [--admin-port 0] [options]

Once both servers listen it prints one line, `READY grpc=<port> admin=<port>`, on stdout.
`--help` lists the options: bearer token, TLS, upload size limit, and fault injection (slow
go-ahead, dying mid-upload, oversized answers to polls, the profiler service missing altogether).

Admin endpoints (127.0.0.1:<admin port>, JSON in and out):

    POST /tasks                    {"service", "instances"?, "duration", "events"?, "execArgs"?, "force"?}
    GET  /tasks                    every task
    GET  /tasks/<id>/progress      task logs, successful and failed instances
    GET  /tasks/<id>/analysis?event=EXECUTION_SAMPLE|LOCK|IN_NEW_TLAB|OUTSIDE_TLAB
    GET  /uploads  /attempts  /instances (those that sent keepAlive)  /stats  /health
    POST /pprof/tasks, GET /pprof/...  pprof tasks (oap_pprof.py)
"""
import argparse
import base64
import collections
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import uuid
from concurrent import futures
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import grpc

import oap_pprof

REPO = Path(__file__).resolve().parents[2]
PROTO_FILES = ["common/Common.proto", "common/Command.proto", "management/Management.proto",
               "asyncprofiler/AsyncProfiler.proto", "pprof/Pprof.proto", "pprof/profile.proto"]

# Task log operation types, with the codes the OAP stores for them.
NOTIFIED, EXECUTION_FINISHED, TOO_LARGE, TASK_ERROR = 1, 2, 3, 4
OPERATION_NAMES = {NOTIFIED: "NOTIFIED", EXECUTION_FINISHED: "EXECUTION_FINISHED",
                   TOO_LARGE: "JFR_UPLOAD_FILE_TOO_LARGE_ERROR", TASK_ERROR: "EXECUTION_TASK_ERROR"}

# A task stays visible to polls this long after its profiling window ends.
EXPIRY_GRACE_MS = 5 * 60 * 1000

# Analysis event name -> `jsampler convert --event` value.
ANALYSIS_EVENTS = {"EXECUTION_SAMPLE": "cpu", "LOCK": "lock", "IN_NEW_TLAB": "alloc", "OUTSIDE_TLAB": "alloc"}


def now_ms():
    return int(time.time() * 1000)


def log(msg):
    print(f"oap: {msg}", file=sys.stderr, flush=True)


def safe_name(s):
    """A string made fit to be one path component."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", s) or "_"


# ---------------------------------------------------------------------------------------------
# Generated protocol code


def generate_stubs(proto_dir, gen_dir):
    """Compile the protos into gen_dir, unless it already holds code made from these very files.

    The code is generated in a fresh sibling directory and renamed into place, so servers starting
    at the same moment never see each other's half-written output."""
    from grpc_tools import protoc
    import google.protobuf
    digest = hashlib.sha256(f"{grpc.__version__} {google.protobuf.__version__}\n".encode())
    for name in PROTO_FILES:
        digest.update(name.encode() + b"\0" + (proto_dir / name).read_bytes() + b"\0")
    stamp = digest.hexdigest()

    def fresh(d):
        try:
            return (d / ".stamp").read_text() == stamp
        except OSError:
            return False

    if fresh(gen_dir):
        return
    gen_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=gen_dir.name + ".tmp-", dir=gen_dir.parent))
    try:
        rc = protoc.main(["grpc_tools.protoc", f"-I{proto_dir}", f"--python_out={tmp}",
                          f"--grpc_python_out={tmp}"] + [str(proto_dir / n) for n in PROTO_FILES])
        if rc != 0:
            raise SystemExit(f"oap: protoc failed ({rc}) on {proto_dir}")
        (tmp / ".stamp").write_text(stamp)
        for _ in range(5):
            if fresh(gen_dir):          # another server got there first
                return
            if gen_dir.exists():        # stale output: move it aside, then drop it
                old = Path(tempfile.mkdtemp(prefix=gen_dir.name + ".old-", dir=gen_dir.parent))
                try:
                    os.rename(gen_dir, old / "gen")
                except OSError:
                    pass
                shutil.rmtree(old, ignore_errors=True)
            try:
                os.rename(tmp, gen_dir)
                return
            except OSError:
                continue                # someone renamed theirs in between; look again
        raise SystemExit(f"oap: could not put generated code in place at {gen_dir}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def load_protocol(proto_dir, gen_dir):
    generate_stubs(proto_dir, gen_dir)
    sys.path.insert(0, str(gen_dir))
    global command_pb2, mgmt_pb2, mgmt_grpc, ap_pb2, ap_grpc
    from common import Command_pb2 as command_pb2
    from management import Management_pb2 as mgmt_pb2, Management_pb2_grpc as mgmt_grpc
    from asyncprofiler import AsyncProfiler_pb2 as ap_pb2, AsyncProfiler_pb2_grpc as ap_grpc
    from pprof import Pprof_pb2, Pprof_pb2_grpc, profile_pb2
    oap_pprof.load(command_pb2, Pprof_pb2, Pprof_pb2_grpc, profile_pb2)


# ---------------------------------------------------------------------------------------------
# Server state, shared by the gRPC handlers and the admin interface (all under one lock)


class State:
    def __init__(self, args):
        self.args = args
        self.lock = threading.Lock()
        self.tasks = {}                 # taskId -> task dict, in creation order
        self.last_create_time = 0
        self.instances = {}             # (service, instance) -> instance dict
        self.uploads = []
        self.attempts = []
        self.file_numbers = collections.Counter()
        self.stats = {"polls": 0, "denied": 0, "collects": 0, "notified": 0}
        saved = None
        if args.state and os.path.exists(args.state):  # a restarted OAP keeps tasks, logs and uploads
            with open(args.state) as f:
                saved = json.load(f)
            self.tasks = saved["tasks"]
            self.last_create_time = saved["lastCreateTime"]
            self.uploads = saved["uploads"]
            self.attempts = saved["attempts"]
            for u in self.uploads:
                self.file_numbers[(u["taskId"], u["instance"])] += 1
        self.pprof = oap_pprof.PprofState(self, saved)

    def log(self, msg):
        log(msg)

    def save(self):
        """Write tasks, logs and uploads to --state, if given (caller holds the lock)."""
        if not self.args.state:
            return
        tmp = f"{self.args.state}.tmp{os.getpid()}"
        with open(tmp, "w") as f:
            json.dump(dict({"tasks": self.tasks, "lastCreateTime": self.last_create_time, "uploads": self.uploads,
                            "attempts": self.attempts}, **self.pprof.saved()), f)
        os.replace(tmp, self.args.state)

    def instance(self, service, name):
        """The record of an instance, created on first sight (caller holds the lock)."""
        key = (service, name)
        if key not in self.instances:
            self.instances[key] = {"service": service, "instance": name, "keepAlives": 0,
                                   "properties": {}, "polls": 0, "lastSeen": 0}
        inst = self.instances[key]
        inst["lastSeen"] = now_ms()
        return inst

    def add_log(self, task, instance, op, message=None):
        """Append a task log entry (caller holds the lock)."""
        task["logs"].append({"instance": instance, "operationType": OPERATION_NAMES[op], "code": op,
                             "time": now_ms(), "message": message})
        if op == NOTIFIED:
            self.stats["notified"] += 1
        self.save()

    def create_task(self, body):
        """POST /tasks: returns (http status, reply)."""
        service = body.get("service")
        duration = body.get("duration")
        instances = body.get("instances") or []
        events = body.get("events") or ["CPU"]
        extra = body.get("execArgs") or ""
        if not isinstance(service, str) or not service:
            return 400, {"error": "service must be a non-empty string"}
        if not isinstance(duration, int) or isinstance(duration, bool) or duration <= 0:
            return 400, {"error": "duration must be a positive integer (seconds)"}
        if not all(isinstance(i, str) for i in instances) or not all(isinstance(e, str) for e in events):
            return 400, {"error": "instances and events must be lists of strings"}
        if not isinstance(extra, str):
            return 400, {"error": "execArgs must be a string"}
        with self.lock:
            now = now_ms()
            # The OAP refuses a task while another one of the same service is still running.
            if not body.get("force"):
                for t in self.tasks.values():
                    if t["service"] == service and t["createTime"] + t["duration"] * 1000 > now:
                        return 409, {"error": "ALREADY_PROFILING_ERROR"}
            create_time = max(now, self.last_create_time + 1)
            self.last_create_time = create_time
            service_id = base64.b64encode(service.encode()).decode() + ".1"
            task_id = f"{create_time}_{service_id}"
            exec_args = "event=" + ",".join(e.lower() for e in events) + ("," + extra if extra else "")
            self.tasks[task_id] = {"id": task_id, "service": service, "instances": list(instances),
                                   "duration": duration, "events": list(events), "execArgs": exec_args,
                                   "createTime": create_time, "logs": [], "errors": []}
            self.save()
        log(f"task {task_id} created: service={service} duration={duration}s execArgs={exec_args}")
        return 200, {"id": task_id, "createTime": create_time, "execArgs": exec_args}

    def progress(self, task):
        with self.lock:
            logs = [dict(entry) for entry in task["logs"]]
        success, failed = [], []
        for entry in logs:
            if entry["code"] == EXECUTION_FINISHED and entry["instance"] not in success:
                success.append(entry["instance"])
        for entry in logs:
            if entry["code"] in (TASK_ERROR, TOO_LARGE) and entry["instance"] not in success + failed:
                failed.append(entry["instance"])
        return {"logs": logs, "successInstances": success, "errorInstances": failed}


# ---------------------------------------------------------------------------------------------
# gRPC services


class ManagementService:
    def __init__(self, state):
        self.state = state

    def keepAlive(self, request, context):
        with self.state.lock:
            self.state.instance(request.service, request.serviceInstance)["keepAlives"] += 1
        log(f"keepAlive {request.service}/{request.serviceInstance}")
        return command_pb2.Commands()

    def reportInstanceProperties(self, request, context):
        with self.state.lock:
            inst = self.state.instance(request.service, request.serviceInstance)
            inst["properties"] = {p.key: p.value for p in request.properties}
        log(f"reportInstanceProperties {request.service}/{request.serviceInstance}: "
            f"{len(request.properties)} properties")
        return command_pb2.Commands()


class AsyncProfilerTaskService:
    def __init__(self, state):
        self.state = state

    def getAsyncProfilerTaskCommands(self, request, context):
        """The newest live task of the service for this instance that the poller has not seen yet."""
        st = self.state
        service, instance = request.service, request.serviceInstance
        with st.lock:
            st.stats["polls"] += 1
            st.instance(service, instance)["polls"] += 1
        if st.args.huge_commands:
            cmd = command_pb2.Command(command="Padding")
            cmd.args.add(key="padding", value="x" * st.args.huge_commands)
            log(f"poll {service}/{instance}: answered with {st.args.huge_commands} bytes of padding")
            return command_pb2.Commands(commands=[cmd])
        with st.lock:
            now = now_ms()
            chosen = None
            for t in st.tasks.values():
                if (t["service"] == service and t["createTime"] > request.lastCommandTime
                        and t["createTime"] + t["duration"] * 1000 + EXPIRY_GRACE_MS > now
                        and (not t["instances"] or instance in t["instances"])
                        and (chosen is None or t["createTime"] > chosen["createTime"])):
                    chosen = t
            if chosen is None:
                log(f"poll {service}/{instance} since {request.lastCommandTime}: no task")
                return command_pb2.Commands()
            st.add_log(chosen, instance, NOTIFIED)
        args = [("SerialNumber", str(uuid.uuid4())), ("TaskId", chosen["id"]),
                ("Duration", str(chosen["duration"])), ("ExecArgs", chosen["execArgs"]),
                ("CreateTime", str(chosen["createTime"]))]
        cmd = command_pb2.Command(command="AsyncProfilerTaskQuery")
        for key, value in args:
            cmd.args.add(key=key, value=value)
        log(f"poll {service}/{instance} since {request.lastCommandTime}: task {chosen['id']}")
        return command_pb2.Commands(commands=[cmd])

    def collect(self, request_iterator, context):
        """One upload: metadata, our answer (go-ahead or refusal), the recording, half-close."""
        st, args = self.state, self.state.args
        with st.lock:
            st.stats["collects"] += 1
        try:
            first = next(request_iterator)
        except (StopIteration, grpc.RpcError):
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "no metadata")
        meta = first.metaData
        who = f"{meta.service}/{meta.serviceInstance}"
        with st.lock:
            task = st.tasks.get(meta.taskId)
        if task is None:
            log(f"collect {who}: unknown task {meta.taskId!r}")
            context.abort(grpc.StatusCode.NOT_FOUND, "unknown task")

        if meta.type == ap_pb2.EXECUTION_TASK_ERROR:
            message = first.errorMessage
            with st.lock:
                st.add_log(task, meta.serviceInstance, TASK_ERROR, message)
                task["errors"].append({"instance": meta.serviceInstance, "message": message,
                                       "time": now_ms()})
            log(f"collect {who} task {meta.taskId}: execution error: {message}")
            drain(request_iterator)
            return

        if meta.contentSize > args.jfr_max_size:
            log(f"collect {who} task {meta.taskId}: {meta.contentSize} bytes is over the limit")
            with st.lock:   # logged first, so a client that got the refusal finds the log
                st.add_log(task, meta.serviceInstance, TOO_LARGE)
            yield ap_pb2.AsyncProfilerCollectionResponse(type=ap_pb2.TERMINATED_BY_OVERSIZE)
            drain(request_iterator)
            return

        def failed(code, reason, received):
            with st.lock:
                st.attempts.append({"taskId": meta.taskId, "instance": meta.serviceInstance,
                                    "contentSize": meta.contentSize, "received": received,
                                    "reason": reason, "time": now_ms()})
            log(f"collect {who} task {meta.taskId}: failed after {received} bytes: {reason}")
            if code is not None:
                context.abort(code, reason)

        if meta.contentSize < 0:
            failed(grpc.StatusCode.INVALID_ARGUMENT, "negative contentSize", 0)

        if args.slow_collect > 0:
            time.sleep(args.slow_collect)
        yield ap_pb2.AsyncProfilerCollectionResponse()  # the go-ahead

        chunks, received = [], 0
        try:
            for msg in request_iterator:
                if msg.WhichOneof("result") != "content":
                    continue
                chunks.append(msg.content)
                received += len(msg.content)
                if args.die_after_bytes is not None and received >= args.die_after_bytes:
                    log(f"collect {who}: {received} bytes received, dying as asked (--die-after-bytes)")
                    os._exit(3)
                if received > meta.contentSize:
                    # The OAP reads into a buffer of contentSize bytes, which overflows here.
                    failed(grpc.StatusCode.INTERNAL, "content exceeds contentSize", received)
        except grpc.RpcError:
            failed(None, "client went away", received)
            return
        if received < meta.contentSize:
            failed(grpc.StatusCode.DATA_LOSS,
                   f"stream ended after {received} of {meta.contentSize} bytes", received)

        data = b"".join(chunks)
        with st.lock:
            key = (meta.taskId, meta.serviceInstance)
            st.file_numbers[key] += 1
            path = Path(args.store) / safe_name(meta.taskId) / \
                f"{safe_name(meta.serviceInstance)}-{st.file_numbers[key]}.jfr"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        entry = {"taskId": meta.taskId, "instance": meta.serviceInstance, "contentSize": meta.contentSize,
                 "received": received, "sha256": hashlib.sha256(data).hexdigest(), "path": str(path),
                 "time": now_ms()}
        with st.lock:
            st.uploads.append(entry)
            st.add_log(task, meta.serviceInstance, EXECUTION_FINISHED)
        log(f"collect {who} task {meta.taskId}: {received} bytes stored in {path}")


def drain(request_iterator):
    """Read the rest of a client stream until it half-closes (or goes away)."""
    try:
        for _ in request_iterator:
            pass
    except grpc.RpcError:
        pass


class FloodInterceptor(grpc.ServerInterceptor):
    """Answers every task poll (a unary call) with empty messages, one after another, until the client goes away."""

    POLL = "/skywalking.v10.AsyncProfilerTask/getAsyncProfilerTaskCommands"

    def __init__(self, state):
        self.state = state

    def intercept_service(self, continuation, details):
        if details.method != self.POLL:
            return continuation(details)

        def flood(request, context):
            with self.state.lock:
                self.state.stats["polls"] += 1
            sent = 0
            while context.is_active():
                yield b""
                sent += 1
            log(f"poll: flooded with {sent} empty messages before the client went away")

        return grpc.unary_stream_rpc_method_handler(flood, request_deserializer=lambda b: b,
                                                    response_serializer=lambda m: m)


class TokenInterceptor(grpc.ServerInterceptor):
    """Refuses every call whose `authentication` metadata is not the expected token."""

    def __init__(self, token, state):
        self.token, self.state = token, state

    def intercept_service(self, continuation, details):
        handler = continuation(details)
        if handler is None:
            return None     # unknown method: let gRPC answer UNIMPLEMENTED
        got = dict(details.invocation_metadata or ()).get("authentication")
        if got == self.token:
            return handler
        with self.state.lock:
            self.state.stats["denied"] += 1
        log(f"{details.method}: denied (authentication {'missing' if got is None else 'wrong'})")

        def deny(request, context):
            context.abort(grpc.StatusCode.PERMISSION_DENIED, "")

        def deny_stream(request, context):
            context.abort(grpc.StatusCode.PERMISSION_DENIED, "")
            yield  # never reached; makes this a generator

        if handler.request_streaming and handler.response_streaming:
            return grpc.stream_stream_rpc_method_handler(deny_stream)
        if handler.request_streaming:
            return grpc.stream_unary_rpc_method_handler(deny)
        if handler.response_streaming:
            return grpc.unary_stream_rpc_method_handler(deny_stream)
        return grpc.unary_unary_rpc_method_handler(deny)


# ---------------------------------------------------------------------------------------------
# Analysis: merge the uploads of a task into one call tree


def run_convert(state, args):
    """Runs `jsampler convert args`: (returncode, stdout bytes, stderr text), or raises OSError/TimeoutExpired."""
    res = subprocess.run([state.args.jsampler, "convert"] + args, capture_output=True, timeout=300)
    return res.returncode, res.stdout, res.stderr.decode(errors="replace")


def analyse(state, task, event):
    """Returns (http status, reply) for GET /tasks/<id>/analysis: the OAP's analysis tree of the task's uploads,
    made by jsampler's converter (every upload's stacks merged, then its SkyWalking tree format)."""
    if event not in ANALYSIS_EVENTS:
        return 400, {"error": f"unknown event {event!r}; one of {', '.join(ANALYSIS_EVENTS)}"}
    with state.lock:
        files = [u["path"] for u in state.uploads if u["taskId"] == task["id"]]
    merged = []
    try:
        for path in files:
            rc, out, err = run_convert(state, ["--event", ANALYSIS_EVENTS[event], path, "-", "--format", "collapsed"])
            if rc == 3:
                continue    # the recording has no event of this kind: it adds nothing to the tree
            if rc != 0:
                return 500, {"error": f"convert {path} failed ({rc}): {err.strip()}", "stderr": err}
            merged.append(out)
        elements = []
        if any(merged):
            with tempfile.TemporaryDirectory(prefix="oap-analysis-") as tmp:
                stacks = Path(tmp) / "all.collapsed"
                stacks.write_bytes(b"".join(merged))
                rc, out, err = run_convert(state, [str(stacks), str(Path(tmp) / "tree.json"), "--format", "json"])
                if rc != 0:
                    return 500, {"error": f"convert to the analysis tree failed ({rc}): {err.strip()}", "stderr": err}
                elements = json.loads((Path(tmp) / "tree.json").read_text())["trees"][0]["elements"]
    except (OSError, subprocess.TimeoutExpired) as e:
        return 500, {"error": f"convert: {e}", "stderr": ""}
    self_by_sig = collections.Counter()
    for e in elements:
        if e["self"]:
            self_by_sig[e["codeSignature"]] += e["self"]
    top = [{"codeSignature": sig, "self": own} for sig, own in self_by_sig.most_common(20)]
    return 200, {"type": event, "files": len(files), "elements": elements, "top": top}


# ---------------------------------------------------------------------------------------------
# Admin interface


def make_admin_handler(state):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *a):
            log("admin " + (fmt % a))

        def reply(self, status, body):
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def find_task(self, path, suffix):
            task_id = urllib.parse.unquote(path[len("/tasks/"):-len(suffix)])
            with state.lock:
                return state.tasks.get(task_id)

        def do_GET(self):
            url = urllib.parse.urlsplit(self.path)
            path, query = url.path, urllib.parse.parse_qs(url.query)
            with state.lock:
                simple = {
                    "/health": lambda: {"ok": True},
                    "/tasks": lambda: [dict(t, logs=len(t["logs"])) for t in state.tasks.values()],
                    "/uploads": lambda: list(state.uploads),
                    "/attempts": lambda: list(state.attempts),
                    # as the OAP: only keepAlive makes an instance (reportInstanceProperties only updates it)
                    "/instances": lambda: [dict(i) for i in state.instances.values() if i["keepAlives"] > 0],
                    "/stats": lambda: dict(state.stats),
                }.get(path)
                body = simple() if simple else None
            if simple:
                return self.reply(200, body)
            if path.startswith("/pprof/"):
                got = oap_pprof.admin_get(state.pprof, path)
                if got:
                    return self.reply(*got)
            for suffix in ("/progress", "/analysis"):
                if path.startswith("/tasks/") and path.endswith(suffix):
                    task = self.find_task(path, suffix)
                    if task is None:
                        return self.reply(404, {"error": "no such task"})
                    if suffix == "/progress":
                        return self.reply(200, state.progress(task))
                    event = query.get("event", ["EXECUTION_SAMPLE"])[0]
                    return self.reply(*analyse(state, task, event))
            self.reply(404, {"error": f"no such endpoint: GET {path}"})

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length > 0 else b""
            where = urllib.parse.urlsplit(self.path).path
            if where not in ("/tasks", "/pprof/tasks"):
                return self.reply(404, {"error": f"no such endpoint: POST {self.path}"})
            try:
                body = json.loads(raw or b"{}")
            except ValueError as e:
                return self.reply(400, {"error": f"bad JSON: {e}"})
            if not isinstance(body, dict):
                return self.reply(400, {"error": "body must be a JSON object"})
            self.reply(*(state.create_task(body) if where == "/tasks" else state.pprof.create_task(body)))

    return Handler


# ---------------------------------------------------------------------------------------------
# Start-up


def parse_args(argv):
    p = argparse.ArgumentParser(description="A SkyWalking OAP stand-in for jsampler's tests.")
    p.add_argument("--port", type=int, default=0, help="gRPC port on 127.0.0.1 (0: any free one)")
    p.add_argument("--admin-port", type=int, default=0, help="admin HTTP port on 127.0.0.1 (0: any free one)")
    p.add_argument("--proto", default=str(REPO / "proto"), help="directory of the .proto files")
    p.add_argument("--gen", default=str(REPO / "build" / "backend-gen"),
                   help="directory for the generated Python code")
    p.add_argument("--store", help="where uploaded recordings go (default: a temporary directory, "
                                   "removed at a clean exit)")
    p.add_argument("--jsampler", default=str(REPO / "build" / "jsampler"),
                   help="the jsampler binary, used for analysis")
    p.add_argument("--token", help="require this `authentication` metadata on every call")
    p.add_argument("--tls-cert", help="serve TLS with this PEM certificate chain (needs --tls-key)")
    p.add_argument("--tls-key", help="the PEM private key for --tls-cert")
    p.add_argument("--jfr-max-size", type=int, default=31457280,
                   help="larger recordings are refused with TERMINATED_BY_OVERSIZE (bytes)")
    p.add_argument("--max-message", type=int, default=50 * 1024 * 1024,
                   help="largest gRPC message received (bytes)")
    p.add_argument("--die-after-bytes", type=int,
                   help="exit at once (status 3) when one upload has received this many bytes")
    p.add_argument("--slow-collect", type=float, default=0.0,
                   help="wait this many seconds before the go-ahead of an upload")
    p.add_argument("--huge-commands", type=int, default=0,
                   help="answer every task poll with one message of this many bytes (a padded command)")
    p.add_argument("--flood-commands", action="store_true",
                   help="answer every task poll with empty messages without end (a unary call gets one)")
    p.add_argument("--unimplemented", action="store_true",
                   help="do not offer the AsyncProfilerTask service (calls get UNIMPLEMENTED)")
    p.add_argument("--no-pprof", action="store_true",
                   help="do not offer the PprofTask service, as an OAP without receiver-pprof (UNIMPLEMENTED)")
    p.add_argument("--pprof-max-size", type=int, default=30 * 1024 * 1024,
                   help="larger pprof profiles are refused with PPROF_TERMINATED_BY_OVERSIZE (bytes; pprofMaxSize)")
    p.add_argument("--state", help="keep tasks, logs and uploads in this JSON file across restarts")
    p.add_argument("--ready-file", help="also write the READY line to this file")
    args = p.parse_args(argv)
    if bool(args.tls_cert) != bool(args.tls_key):
        p.error("--tls-cert and --tls-key go together")
    return args


def main(argv):
    args = parse_args(argv)
    load_protocol(Path(args.proto), Path(args.gen))
    own_store = args.store is None
    if own_store:
        args.store = tempfile.mkdtemp(prefix="oap-store-")
    try:
        return serve(args)
    finally:
        if own_store:
            shutil.rmtree(args.store, ignore_errors=True)


def serve(args):
    """Runs both servers until SIGTERM or SIGINT."""
    state = State(args)
    interceptors = [TokenInterceptor(args.token, state)] if args.token is not None else []
    if args.flood_commands:
        interceptors.append(FloodInterceptor(state))
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=64), interceptors=interceptors,
                         options=[("grpc.max_receive_message_length", args.max_message),
                                  ("grpc.so_reuseport", 0)])
    mgmt_grpc.add_ManagementServiceServicer_to_server(ManagementService(state), server)
    if not args.unimplemented:
        ap_grpc.add_AsyncProfilerTaskServicer_to_server(AsyncProfilerTaskService(state), server)
    if not args.no_pprof:
        oap_pprof.register(server, state, state.pprof)
    address = f"127.0.0.1:{args.port}"
    try:
        if args.tls_cert:
            creds = grpc.ssl_server_credentials([(Path(args.tls_key).read_bytes(),
                                                  Path(args.tls_cert).read_bytes())])
            port = server.add_secure_port(address, creds)
        else:
            port = server.add_insecure_port(address)
    except (OSError, RuntimeError) as e:
        raise SystemExit(f"oap: cannot listen on {address}: {e}")
    if not port:
        raise SystemExit(f"oap: cannot listen on {address}")
    server.start()

    try:
        httpd = ThreadingHTTPServer(("127.0.0.1", args.admin_port), make_admin_handler(state))
    except OSError as e:
        server.stop(0)
        raise SystemExit(f"oap: cannot listen on admin port {args.admin_port}: {e}")
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, name="admin", daemon=True).start()

    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())

    ready = f"READY grpc={port} admin={httpd.server_address[1]}"
    if args.ready_file:
        tmp = f"{args.ready_file}.tmp{os.getpid()}"
        with open(tmp, "w") as f:
            f.write(ready + "\n")
        os.replace(tmp, args.ready_file)
    print(ready, flush=True)
    log(f"listening ({'TLS' if args.tls_cert else 'plaintext'}{', token' if args.token else ''}"
        f"{', no profiler service' if args.unimplemented else ''}{', no pprof service' if args.no_pprof else ''}), "
        f"storing uploads in {args.store}")

    while not stop.wait(1.0):
        pass
    log("stopping")
    server.stop(0)
    httpd.shutdown()
    httpd.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
