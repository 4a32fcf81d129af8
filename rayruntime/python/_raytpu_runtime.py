"""What raytpu's launcher and replica runtime share.

raytpu ships this module beside the launcher (at the root of a job's
working_dir) and inside the raytpu_replica package, each time with
raytpu_protocol.json in the same directory: the protocol description the Go
side generates from its wire types (package rayruntime, Protocol). Every
key, line prefix, file name and private Ray API the Python side relies on
comes from it.
"""

import importlib
import inspect
import json
import os
import re
import sys
import traceback

PROTOCOL_FILE = "raytpu_protocol.json"


def load_protocol(directory=None):
    """Reads the protocol description shipped beside this module."""
    directory = directory or os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(directory, PROTOCOL_FILE)) as f:
        return json.load(f)


PROTOCOL = load_protocol()
RESULT_PREFIX = PROTOCOL["result_prefix"]
PROFILER_PREFIX = PROTOCOL["profiler_prefix"]


def wire_keys(type_name):
    """The JSON keys of wire type type_name, by name."""
    for t in PROTOCOL["types"]:
        if t["name"] == type_name:
            return {k["name"]: k for k in t["keys"]}
    raise KeyError("raytpu: the protocol description has no wire type %r" % type_name)


def error_info(exc):
    """An exception as the outcome reports it (an OutcomeError)."""
    return {"type": type(exc).__name__, "message": str(exc)}


def report_exception(what, warnings=None):
    """Reports the exception being handled: its traceback on stderr, and
    "what: Type: message" appended to warnings (the outcome's list) when
    given. Returns that line."""
    exc = sys.exc_info()[1]
    line = "%s: %s: %s" % (what, type(exc).__name__, exc)
    print("raytpu: " + what + ":", file=sys.stderr)
    traceback.print_exc(file=sys.stderr)
    sys.stderr.flush()
    if warnings is not None:
        warnings.append(line)
    return line


def print_profiler_report(report):
    """Prints a profiler server report as a PROFILER_PREFIX line."""
    print(PROFILER_PREFIX + json.dumps(report, sort_keys=True), flush=True)


# The environment variable in which a process remembers the port of the
# profiler server it started (jax.profiler starts one per process).
PROFILER_PORT_ENV = "RAYTPU_PROFILER_PORT"


def lock_profiler_port(port):
    """Locks port for this machine's raytpu profiler servers; the lock
    lives as long as the process. gRPC sets SO_REUSEPORT, so a second
    server on a taken port would start and share it: the lock, then one
    bind without SO_REUSEPORT, make a taken port an error instead."""
    import fcntl
    import tempfile

    path = os.path.join(tempfile.gettempdir(), "raytpu-profiler-%d.lock" % port)
    fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise OSError("port %d: another raytpu profiler server on this machine holds it" % port) from None
    return fd


def free_port(port=0):
    """Binds port (0: any free one) once, without SO_REUSEPORT, and
    returns the port bound: an OSError if anything holds it."""
    import socket

    with socket.socket() as s:
        s.bind(("", port))
        return s.getsockname()[1]


def start_profiler(port, start_server=None):
    """Starts jax.profiler's server in this process on port (0: a free
    one), once per process, and returns {"port": N}; or {"error": ...}
    when it could not start (reported on stderr): the workload goes on
    without it. start_server defaults to jax.profiler.start_server."""
    try:
        listening = os.environ.get(PROFILER_PORT_ENV)
        if listening is None:
            if start_server is None:
                import jax

                start_server = jax.profiler.start_server
            if port:
                lock_profiler_port(port)
            chosen = free_port(port)
            start_server(chosen)
            listening = os.environ[PROFILER_PORT_ENV] = str(chosen)
        return {"port": int(listening)}
    except Exception as exc:  # reported; the workload goes on without a profiler
        report_exception("starting the JAX profiler server on port %d" % port)
        return {"error": "%s: %s" % (type(exc).__name__, exc)}


def node_report():
    """Where this process runs: pid, Ray node id and IP."""
    import ray

    return {"pid": os.getpid(), "node_id": ray.get_runtime_context().get_node_id(),
            "ip": ray.util.get_node_ip_address()}


def _assigned_in_init(cls, name):
    init = cls.__dict__.get("__init__")
    if init is None:
        return False
    try:
        src = inspect.getsource(init)
    except (OSError, TypeError):
        return False
    return re.search(r"\bself\.%s\s*(:[^=]*)?=" % re.escape(name), src) is not None


def _has_attr(obj, name):
    if hasattr(obj, name):
        return True
    if not inspect.isclass(obj):
        return False
    for cls in inspect.getmro(obj):
        if name in getattr(cls, "__dataclass_fields__", {}) or _assigned_in_init(cls, name):
            return True
    return False


def resolve_private_api(api):
    """Resolves a private Ray API of the protocol ({"module", "attr"}):
    returns None, or why it is missing."""
    try:
        obj = importlib.import_module(api["module"])
    except ImportError as exc:
        return "module %s: %s" % (api["module"], exc)
    path = []
    for name in api["attr"].split("."):
        path.append(name)
        if not _has_attr(obj, name):
            return "%s:%s: no attribute %r" % (api["module"], ".".join(path), name)
        if not hasattr(obj, name):
            return None  # an instance attribute: nothing further to resolve
        obj = getattr(obj, name)
    return None


def missing_private_apis():
    """The private Ray APIs of the protocol the installed Ray lacks, each
    as "module:attr (used for ...): why", against the Ray version they
    were checked with."""
    out = []
    for api in PROTOCOL["ray"]["private_apis"]:
        why = resolve_private_api(api)
        if why is not None:
            out.append("%s:%s (used for %s; checked with Ray %s): %s" % (
                api["module"], api["attr"], api["used_for"], PROTOCOL["ray"]["checked_version"], why))
    return out


def storage_uri(filesystem, path):
    """A path on Ray Train's storage as the user names it: a Cloud Storage
    path (pyarrow's "bucket/object") as gs://bucket/object; others as they
    are."""
    if path and getattr(filesystem, "type_name", "") == "gcs" and "://" not in path:
        return "gs://" + path
    return path
