"""oap_pprof.py: the pprof part of the test backend (oap.py), as the OAP's receiver-pprof module behaves.

  skywalking.v10.PprofTask   getPprofTaskCommands: the oldest task of the service created after lastCommandTime, for
                             this instance, as one PprofTaskQuery command (Events lower-case, Duration in minutes,
                             DumpPeriod); NOTIFIED logged. collect: the metadata answered (go ahead, or
                             PPROF_TERMINATED_BY_OVERSIZE past --pprof-max-size, or PPROF_EXECUTION_TASK_ERROR for an
                             error report), the content copied into a buffer of exactly contentSize, parsed when the
                             client half-closes (after the call has ended OK, so a parse error changes no status).

What the OAP does with a task id it never sent: for an error report or an oversized profile it throws (the client
gets UNKNOWN); for a profile it logs an error and stores nothing. A profile is gunzipped and parsed with protobuf
(proto/pprof/profile.proto) and built into the OAP's tree: locations and functions found by position (id - 1), 1 added
to every node of the path per Sample message (values never read), nodes named "function:line" (a location's lines
joined by ';'); the analysis merges the trees of a task's uploads by signature and lists them as the OAP's query does
(elements with id, parentId, codeSignature, total, self; the root is "root").

Admin endpoints (added to oap.py's):

    POST /pprof/tasks              {"service", "instances", "events": "CPU"|..., "duration"? (minutes),
                                    "dumpPeriod"?, "force"?}
    GET  /pprof/tasks  /pprof/uploads
    GET  /pprof/tasks/<id>/progress       logs, successful and failed instances
    GET  /pprof/tasks/<id>/analysis       the merged tree of the task's uploads
"""
import collections
import gzip
import hashlib
import os
import time
import uuid
from pathlib import Path

import grpc

# The OAP's PprofEventType, in its order; the command carries the lower-case name.
EVENTS = ["CPU", "HEAP", "BLOCK", "MUTEX", "GOROUTINE", "THREADCREATE", "ALLOCS"]
NOTIFIED, EXECUTION_FINISHED, TOO_LARGE, TASK_ERROR = 1, 2, 3, 4
OPERATION_NAMES = {NOTIFIED: "NOTIFIED", EXECUTION_FINISHED: "EXECUTION_FINISHED",
                   TOO_LARGE: "PPROF_UPLOAD_FILE_TOO_LARGE_ERROR", TASK_ERROR: "EXECUTION_TASK_ERROR"}
CACHE_WINDOW_MS = 5 * 60 * 1000  # the OAP's task cache holds tasks created in the last 5 minutes

pb = {}  # generated modules, set by load()


def load(command_pb2, pprof_pb2, pprof_grpc, profile_pb2):
    pb.update(command=command_pb2, pprof=pprof_pb2, grpc=pprof_grpc, profile=profile_pb2)


def now_ms():
    return int(time.time() * 1000)


class PprofState:
    """Tasks, logs and uploads of pprof tasks; shares oap.State's lock and its persistence."""

    def __init__(self, state, saved=None):
        self.state = state
        self.tasks = dict(saved.get("pprofTasks", {})) if saved else {}
        self.uploads = list(saved.get("pprofUploads", [])) if saved else []
        self.last_create_time = saved.get("pprofLastCreateTime", 0) if saved else 0
        self.file_numbers = collections.Counter((u["taskId"], u["instance"]) for u in self.uploads)

    def saved(self):
        return {"pprofTasks": self.tasks, "pprofUploads": self.uploads, "pprofLastCreateTime": self.last_create_time}

    def add_log(self, task, instance, op, message=None):
        """Append a task log entry (caller holds the lock)."""
        task["logs"].append({"instance": instance, "operationType": OPERATION_NAMES[op], "code": op,
                             "time": now_ms(), "message": message})
        self.state.save()

    def create_task(self, body):
        """POST /pprof/tasks, checked as PprofMutationService checks it: returns (http status, reply)."""
        service, instances = body.get("service"), body.get("instances") or []
        events, duration, period = body.get("events"), body.get("duration", 0), body.get("dumpPeriod", 0)
        if not isinstance(service, str) or not service:
            return 400, {"error": "service must be a non-empty string"}
        if events not in EVENTS:
            return 400, {"error": f"events must be one of {', '.join(EVENTS)}"}
        if not all(isinstance(x, int) and not isinstance(x, bool) for x in (duration, period)):
            return 400, {"error": "duration and dumpPeriod must be integers"}
        if events in ("CPU", "BLOCK", "MUTEX") and not 0 < duration <= 15:
            return 400, {"error": "duration must be 1 to 15 minutes"}
        if events in ("BLOCK", "MUTEX") and period <= 0:
            return 400, {"error": "dumpPeriod cannot be negative"}
        if not instances or not all(isinstance(i, str) for i in instances):
            return 400, {"error": "serviceInstanceIds cannot be empty"}
        with self.state.lock:
            now = now_ms()
            if not body.get("force"):
                for t in self.tasks.values():
                    if t["service"] == service and t["events"] == events and \
                            t["createTime"] + t["duration"] * 60000 >= now:
                        return 409, {"error": "current service already has monitor pprof task execute at this time"}
            create_time = max(now, self.last_create_time + 1)
            self.last_create_time = create_time
            task_id = f"{create_time}_{service}.1"
            self.tasks[task_id] = {"id": task_id, "service": service, "instances": list(instances), "events": events,
                                   "duration": duration, "dumpPeriod": period, "createTime": create_time, "logs": [],
                                   "errors": []}
            self.state.save()
        self.state.log(f"pprof task {task_id} created: service={service} events={events} duration={duration}min "
                       f"dumpPeriod={period}")
        return 200, {"id": task_id, "createTime": create_time}

    def progress(self, task):
        with self.state.lock:
            logs = [dict(e) for e in task["logs"]]
        ok = sorted({e["instance"] for e in logs if e["code"] == EXECUTION_FINISHED})
        bad = sorted({e["instance"] for e in logs if e["code"] in (TASK_ERROR, TOO_LARGE)} - set(ok))
        return {"logs": logs, "successInstances": ok, "errorInstances": bad}


def signature(prof, location_id):
    """PprofParser.resolveSignature: a location's lines as "function:line", joined by ';'; "root" for id 0."""
    if location_id == 0:
        return "root"
    loc = prof.location[location_id - 1]
    return ";".join("%s:%d" % (prof.string_table[prof.function[ln.function_id - 1].name], ln.line) for ln in loc.line)


def frame_tree(prof):
    """FrameTreeBuilder: nodes keyed by location id, +1 to every node of a Sample's path (root to leaf), +1 self at its
    leaf, +1 to the root per Sample. Returns {"signature", "total", "self", "children": [...]}."""
    root = {"loc": 0, "total": 0, "self": 0, "children": {}}
    for sample in prof.sample:
        children = root["children"]
        ids = list(reversed(sample.location_id))
        for i, loc in enumerate(ids):
            child = children.setdefault(loc, {"loc": loc, "total": 0, "self": 0, "children": {}})
            child["total"] += 1
            child["self"] += 1 if i == len(ids) - 1 else 0
            children = child["children"]
        root["total"] += 1

    def named(node):
        return {"signature": signature(prof, node["loc"]), "total": node["total"], "self": node["self"],
                "children": [named(c) for c in node["children"].values()]}
    return named(root)


def merged_elements(trees):
    """PprofMergeBuilder then PprofStackTree: trees merged under one "root" by signature, as a list of elements."""
    root = {"signature": "root", "total": 0, "self": 0, "children": {}}

    def merge(frame, tree):
        for child in tree["children"]:
            sub = frame["children"].setdefault(child["signature"], {"signature": child["signature"], "total": 0,
                                                                    "self": 0, "children": {}})
            merge(sub, child)
        frame["total"] += tree["total"]
        frame["self"] += tree["self"]
    for t in trees:
        merge(root, t)
    elements = []

    def convert(parent, frame):
        me = len(elements)
        elements.append({"id": me, "parentId": parent, "codeSignature": frame["signature"], "total": frame["total"],
                         "self": frame["self"]})
        for child in frame["children"].values():
            convert(me, child)
    convert(-1, root)
    return elements


def parse_profile(data):
    """The OAP's PprofParser.dumpTree: gunzip, parse, build the tree; (tree, Sample messages) or raises."""
    prof = pb["profile"].Profile()
    prof.ParseFromString(gzip.decompress(data))
    return frame_tree(prof), len(prof.sample)


class PprofTaskService:
    def __init__(self, state, pstate):
        self.state, self.p = state, pstate

    def getPprofTaskCommands(self, request, context):
        """PprofServiceHandler.getPprofTaskCommands: the oldest cached task newer than lastCommandTime."""
        st, ps = self.state, self.p
        service, instance = request.service, request.serviceInstance
        with st.lock:
            st.stats["pprofPolls"] = st.stats.get("pprofPolls", 0) + 1
            now = now_ms()
            chosen = None
            for t in ps.tasks.values():
                if (t["service"] == service and t["createTime"] > request.lastCommandTime
                        and t["createTime"] > now - CACHE_WINDOW_MS and instance in t["instances"]
                        and (chosen is None or t["createTime"] < chosen["createTime"])):
                    chosen = t
            if chosen is None:
                return pb["command"].Commands()
            ps.add_log(chosen, instance, NOTIFIED)
        cmd = pb["command"].Command(command="PprofTaskQuery")
        for key, value in (("SerialNumber", str(uuid.uuid4())), ("TaskId", chosen["id"]),
                           ("Events", chosen["events"].lower()), ("Duration", str(chosen["duration"])),
                           ("CreateTime", str(chosen["createTime"])), ("DumpPeriod", str(chosen["dumpPeriod"]))):
            cmd.args.add(key=key, value=value)
        st.log(f"pprof poll {service}/{instance} since {request.lastCommandTime}: task {chosen['id']}")
        return pb["command"].Commands(commands=[cmd])

    def collect(self, request_iterator, context):
        """PprofByteBufCollectionObserver: metadata, the answer, the content into a contentSize buffer, parse."""
        st, ps, args, P = self.state, self.p, self.state.args, pb["pprof"]
        try:
            first = next(request_iterator)
        except (StopIteration, grpc.RpcError):
            return
        if not first.HasField("metadata"):
            drain(request_iterator)   # the OAP ignores content before metadata: nothing to store
            return
        meta = first.metadata
        who = f"{meta.service}/{meta.serviceInstance}"
        with st.lock:
            task = ps.tasks.get(meta.taskId)
        if meta.type == P.PPROF_PROFILING_SUCCESS and meta.contentSize > args.pprof_max_size:
            yield P.PprofCollectionResponse(status=P.PPROF_TERMINATED_BY_OVERSIZE)
            if task is None:
                context.abort(grpc.StatusCode.UNKNOWN, "task not found (the OAP throws)")
            st.log(f"pprof collect {who} task {meta.taskId}: {meta.contentSize} bytes is over the limit")
            with st.lock:
                ps.add_log(task, meta.serviceInstance, TOO_LARGE)
            drain(request_iterator)
            return
        if meta.type != P.PPROF_PROFILING_SUCCESS:
            yield P.PprofCollectionResponse(status=P.PPROF_EXECUTION_TASK_ERROR)
            if task is None:
                st.log(f"pprof collect {who}: error report for unknown task {meta.taskId!r}: the OAP throws")
                context.abort(grpc.StatusCode.UNKNOWN, "task not found (the OAP throws)")
            with st.lock:   # the OAP stores no message; kept here so the checks can read what was sent
                ps.add_log(task, meta.serviceInstance, TASK_ERROR, first.errorMessage)
                task["errors"].append({"instance": meta.serviceInstance, "message": first.errorMessage})
            st.log(f"pprof collect {who} task {meta.taskId}: execution error: {first.errorMessage}")
            drain(request_iterator)
            return
        if args.slow_collect > 0:
            time.sleep(args.slow_collect)
        yield P.PprofCollectionResponse(status=P.PPROF_PROFILING_SUCCESS)
        buf, received = bytearray(), 0
        try:
            for msg in request_iterator:
                if msg.WhichOneof("result") != "content":
                    continue
                received += len(msg.content)
                if args.die_after_bytes is not None and received >= args.die_after_bytes:
                    st.log(f"pprof collect {who}: {received} bytes received, dying as asked (--die-after-bytes)")
                    os._exit(3)
                if received > meta.contentSize:   # BufferOverflowException in the OAP
                    context.abort(grpc.StatusCode.UNKNOWN, "content exceeds contentSize")
                buf += msg.content
        except grpc.RpcError:
            st.log(f"pprof collect {who} task {meta.taskId}: client went away after {received} bytes")
            return
        self.store(meta, task, bytes(buf), received)

    def store(self, meta, task, data, received):
        """What the OAP does once the call has ended: log EXECUTION_FINISHED, parse, keep the tree."""
        st, ps = self.state, self.p
        if task is None:
            st.log(f"pprof collect: instance {meta.serviceInstance} has not been assigned a task but still uploaded "
                   f"data ({meta.taskId!r})")
            return
        entry = {"taskId": meta.taskId, "instance": meta.serviceInstance, "contentSize": meta.contentSize,
                 "received": received, "sha256": hashlib.sha256(data).hexdigest(), "time": now_ms(),
                 "events": task["events"]}
        with st.lock:
            key = (meta.taskId, meta.serviceInstance)
            ps.file_numbers[key] += 1
            path = Path(st.args.store) / "pprof" / safe(meta.taskId) / \
                f"{safe(meta.serviceInstance)}-{ps.file_numbers[key]}.pb.gz"
            ps.add_log(task, meta.serviceInstance, EXECUTION_FINISHED)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        entry["path"] = str(path)
        try:
            entry["tree"], entry["samples"] = parse_profile(data)
        except Exception as e:  # the OAP logs it; the task stays EXECUTION_FINISHED without data
            entry["parseError"] = f"{type(e).__name__}: {e}"
        with st.lock:
            ps.uploads.append(entry)
            st.save()
        error = f", parse error: {entry['parseError']}" if "parseError" in entry else ""
        st.log(f"pprof collect {meta.service}/{meta.serviceInstance} task {meta.taskId}: {received} bytes, "
               f"{entry.get('samples', 0)} Sample messages{error}")


def safe(s):
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in s) or "_"


def drain(request_iterator):
    try:
        for _ in request_iterator:
            pass
    except grpc.RpcError:
        pass


def admin_get(ps, path):
    """GET /pprof/...: (status, body), or None when path is not ours."""
    if path == "/pprof/tasks":
        with ps.state.lock:
            return 200, [dict(t, logs=len(t["logs"])) for t in ps.tasks.values()]
    if path == "/pprof/uploads":
        with ps.state.lock:
            return 200, [{k: v for k, v in u.items() if k != "tree"} for u in ps.uploads]
    for suffix in ("/progress", "/analysis"):
        if path.startswith("/pprof/tasks/") and path.endswith(suffix):
            task_id = path[len("/pprof/tasks/"):-len(suffix)]
            with ps.state.lock:
                task = ps.tasks.get(task_id)
                trees = [u["tree"] for u in ps.uploads if u["taskId"] == task_id and "tree" in u]
            if task is None:
                return 404, {"error": "no such pprof task"}
            if suffix == "/progress":
                return 200, ps.progress(task)
            return 200, {"events": task["events"], "uploads": len(trees), "elements": merged_elements(trees)}
    return None


def register(server, state, pstate):
    pb["grpc"].add_PprofTaskServicer_to_server(PprofTaskService(state, pstate), server)

