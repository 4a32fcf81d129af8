"""raytpu's replica runtime: a Ray Serve replica that owns one TPU slice.

raytpu ships this module with every Serve application that has a deployment
with a TPU topology; the application's code imports it:

    from ray import serve
    from raytpu_replica import tpu_slice

    @serve.deployment
    @tpu_slice
    class Model:
        def __init__(self, scale=1.0): ...          # runs on every TPU host
        def reconfigure(self, user_config): ...     # optional, every host
        def __call__(self, request): ...           # every host; host 0 answers

The Serve replica becomes a small CPU-only orchestrator. Serve calls its
reconfigure(user_config) while the replica initialises; the orchestrator
takes its slice reservation out of user_config[RESERVATION_KEY], reserves the
slice with ray.util.tpu.slice_placement_group (no lifetime: the placement
groups die with the replica), starts one host worker actor per TPU host in
bundle i of the slice, ranks them by TPU worker id, joins them into one JAX
distributed program (process i on TPU worker i, coordinator on host 0) and builds the user's class on every host with the
deployment's constructor arguments. The rest of user_config goes to the
class's reconfigure on every host. Each request (HTTP or handle call) is
sent to every host in the same order, SPMD, and host 0's result is the
answer. An HTTP request reaches the user's methods as a picklable Request
(method, path, query_params, headers, body; .json(), .text()).

The slice is released when the replica stops (Serve calls __del__) or dies
(fate-sharing); a replica restart reserves a slice again. When no free slice
appears within the reservation's head timeout, the replica fails to start
with SliceReservationPending, whose message Serve shows in the
deployment's status while it retries.

raytpu's Go side (package rayruntime, WriteModule) ships this package with
_raytpu_runtime.py, the helpers it shares with the launcher, and
raytpu_protocol.json, the description of the keys and prefixes it reads.
"""

import asyncio
import importlib
import inspect
import json
import logging
import os
import socket

import ray
from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy

from . import _raytpu_runtime as rt
from ._reservation import (  # noqa: F401 (the keys are part of the module's API)
    PROFILER_KEY,
    RESERVATION_KEY,
    RESERVATION_VERSION,
    bundle_options,
    replica_where,
    reservation_call,
    slice_group_name,
    split_user_config,
    worker_id,
)

_MODULE = rt.PROTOCOL["files"]["replica_module"]

logger = logging.getLogger("ray.serve")

# Methods the orchestrator handles itself and never forwards as requests.
_OWN_METHODS = {"reconfigure", "check_health", "record_replica_metadata"}


class SliceReservationPending(RuntimeError):
    """No free slice of the topology could be reserved in time."""


class Request:
    """A picklable copy of an HTTP request, as the user's methods see it."""

    def __init__(self, method, path, query_params, headers, body):
        self.method = method
        self.path = path
        self.query_params = query_params
        self.headers = headers
        self.body = body

    def json(self):
        return json.loads(self.body) if self.body else None

    def text(self):
        return self.body.decode("utf-8")

    def __repr__(self):
        return "Request(%s %s, %d bytes)" % (self.method, self.path, len(self.body))


class SliceContext:
    """Where a host worker runs: its rank in the slice and every host's node."""

    def __init__(self, name, rank, num_hosts, coordinator_address, hosts, reservation):
        self.name = name  # the replica's slice placement group name
        self.rank = rank
        self.num_hosts = num_hosts
        self.coordinator_address = coordinator_address
        self.hosts = hosts  # per rank: node_id, node_ip, labels, pid
        self.reservation = reservation

    @property
    def slice_name(self):
        return self.hosts[self.rank]["labels"].get("ray.io/tpu-slice-name", "")


_context = None


def get_slice_context():
    """The SliceContext of this host worker (None outside one)."""
    return _context


def _node_labels():
    labels = ray.get_runtime_context().get_node_labels()
    return {k: (v[0] if isinstance(v, list) and v else v) for k, v in labels.items()}


@ray.remote
class _HostWorker:
    """Runs the user's class on one TPU host of the replica's slice."""

    def __init__(self, bundle, num_hosts):
        self._bundle = bundle
        self._num_hosts = num_hosts
        self._rank = None
        self._obj = None

    def info(self):
        with socket.socket() as s:
            s.bind(("", 0))
            port = s.getsockname()[1]  # used if this host becomes rank 0
        return {
            "bundle": self._bundle,
            "node_id": ray.get_runtime_context().get_node_id(),
            "node_ip": ray.util.get_node_ip_address(),
            "labels": _node_labels(),
            "pid": os.getpid(),
            "port": port,
        }

    def setup(self, name, rank, coordinator, hosts, reservation, user_cls, args, kwargs, jax_distributed, profiler=None):
        self._rank = rank
        if jax_distributed and self._num_hosts > 1:
            import jax

            jax.distributed.initialize(
                coordinator_address=coordinator,
                num_processes=self._num_hosts,
                process_id=self._rank,
            )
        server = None if profiler is None else dict(rt.node_report(), **rt.start_profiler(profiler.get("port", 0)))
        # Ray ships this actor class by value, so its globals are not the
        # module's: set the context on the module the user's code imports.
        ctx = SliceContext(name, self._rank, self._num_hosts, coordinator, hosts, reservation)
        importlib.import_module(_MODULE)._context = ctx
        self._obj = user_cls(*args, **kwargs)
        return server

    def reconfigure(self, user_config):
        return _run(self._obj.reconfigure(user_config))

    def check_health(self):
        if hasattr(self._obj, "check_health"):
            _run(self._obj.check_health())
        return True

    def call(self, method, args, kwargs):
        return _run(getattr(self._obj, method)(*args, **kwargs))


def _run(result):
    if inspect.iscoroutine(result):
        return asyncio.run(result)
    return result


async def _copy_request(arg):
    # Serve hands an HTTP request to __call__ as a starlette Request, which
    # cannot travel to the host workers: copy what it holds.
    try:
        from starlette.requests import Request as StarletteRequest
    except ImportError:
        return arg
    if not isinstance(arg, StarletteRequest):
        return arg
    return Request(
        method=arg.method,
        path=arg.url.path,
        query_params=dict(arg.query_params),
        headers=dict(arg.headers),
        body=await arg.body(),
    )


class _SliceOrchestrator:
    """Base of the class tpu_slice returns; see the module doc."""

    _raytpu_user_class = None
    _raytpu_jax_distributed = True

    def __init__(self, *args, **kwargs):
        self._raytpu_args = args
        self._raytpu_kwargs = kwargs
        self._raytpu_reservation = None
        self._raytpu_slice = None
        self._raytpu_hosts = []
        self._raytpu_profiler = None

    async def reconfigure(self, user_config):
        reservation, self._raytpu_profiler, config = split_user_config(user_config)
        if reservation != self._raytpu_reservation:
            loop = asyncio.get_running_loop()
            await loop.run_in_executor(None, self._raytpu_start, reservation)
        user_cls = self._raytpu_user_class
        if hasattr(user_cls, "reconfigure"):
            await asyncio.gather(*[h.reconfigure.remote(config) for h in self._raytpu_hosts])
        elif config:
            raise ValueError(
                "raytpu: user_config has keys %s but %s has no reconfigure method"
                % (sorted(config), user_cls.__name__)
            )

    async def check_health(self):
        await asyncio.gather(*[h.check_health.remote() for h in self._raytpu_hosts])

    async def _raytpu_forward(self, method, args, kwargs):
        if not self._raytpu_hosts:
            raise RuntimeError("raytpu: the replica holds no slice yet")
        args = [await _copy_request(a) for a in args]
        # Submitted to every host back to back, so all hosts run requests
        # in the same order (SPMD).
        refs = [h.call.remote(method, args, kwargs) for h in self._raytpu_hosts]
        results = await asyncio.gather(*refs)
        return results[0]

    def _raytpu_name(self):
        where = replica_where()
        if not where:  # outside Serve
            return "%s:%s" % (rt.PROTOCOL["slice_group_prefix"], os.getpid())
        return slice_group_name(where["app"], where["deployment"], where["replica"])

    def _raytpu_start(self, res):
        from ray.util.tpu import slice_placement_group

        self._raytpu_stop()
        name = self._raytpu_name()
        call = reservation_call(res)
        what, timeout = call["what"], call["timeout"]
        logger.info("raytpu: %s reserving a %s", name, what)
        try:
            spg = slice_placement_group(name=name, **call["kwargs"])
        except TimeoutError as e:
            msg = ("raytpu: slice reservation pending: %s found no free %s within %ss "
                   "(no node offers TPU-%s-head); Serve retries the replica. Ray: %s"
                   % (name, what, timeout, call["pod_type"], e))
            logger.warning(msg)
            raise SliceReservationPending(msg) from None
        self._raytpu_slice = spg
        pg = spg.placement_group
        ready, _ = ray.wait([pg.ready()], timeout=timeout)
        if not ready:
            self._raytpu_stop()
            msg = ("raytpu: slice reservation pending: %s holds the head of a %s but its "
                   "%d host bundles did not fit within %ss; Serve retries the replica"
                   % (name, what, spg.num_bundles, timeout))
            logger.warning(msg)
            raise SliceReservationPending(msg)
        if spg.num_bundles != spg.num_hosts:
            self._raytpu_stop()
            raise ValueError("raytpu: the slice has %d bundles for %d hosts; the replica runtime "
                             "needs one bundle per host" % (spg.num_bundles, spg.num_hosts))
        opts = bundle_options(spg.bundle_resources)
        hosts = [
            _HostWorker.options(
                scheduling_strategy=PlacementGroupSchedulingStrategy(pg, placement_group_bundle_index=i),
                **opts,
            ).remote(i, spg.num_hosts)
            for i in range(spg.num_hosts)
        ]
        self._raytpu_hosts = hosts
        infos = ray.get([h.info.remote() for h in hosts])
        # Ray puts bundle i on any host of the slice: rank the hosts by
        # their TPU worker id, so JAX process i runs on TPU worker i.
        order = sorted(range(len(infos)), key=lambda i: worker_id(infos[i]))
        hosts = [hosts[i] for i in order]
        infos = [infos[i] for i in order]
        self._raytpu_hosts = hosts
        coordinator = "%s:%d" % (infos[0]["node_ip"], infos[0]["port"])
        for rank, info in enumerate(infos):
            info.pop("port")
            info["rank"] = rank
        servers = ray.get([
            h.setup.remote(name, rank, coordinator, infos, res, self._raytpu_user_class,
                           self._raytpu_args, self._raytpu_kwargs, self._raytpu_jax_distributed,
                           self._raytpu_profiler)
            for rank, h in enumerate(hosts)
        ])
        self._raytpu_reservation = res
        self._raytpu_report_profilers(servers)
        logger.info("raytpu: %s holds slice %s: %s", name,
                    infos[0]["labels"].get("ray.io/tpu-slice-name", ""),
                    json.dumps([{"rank": i["rank"], "node_id": i["node_id"]} for i in infos]))

    def _raytpu_report_profilers(self, servers):
        where = replica_where()
        for rank, server in enumerate(servers):
            if server is not None:
                server.update(where, host=rank)
                rt.print_profiler_report(server)

    def _raytpu_stop(self):
        hosts, self._raytpu_hosts = self._raytpu_hosts, []
        for h in hosts:
            try:
                ray.kill(h)
            except Exception:
                logger.exception("raytpu: killing a host worker")
        spg, self._raytpu_slice = self._raytpu_slice, None
        self._raytpu_reservation = None
        if spg is not None:
            spg.shutdown()
            logger.info("raytpu: %s released its slice", self._raytpu_name())

    def __del__(self):
        # Serve calls this when it stops the replica; fate-sharing frees the
        # slice too if the replica dies without it.
        if getattr(self, "_raytpu_slice", None) is not None or getattr(self, "_raytpu_hosts", None):
            self._raytpu_stop()


def _forwarder(name):
    async def forward(self, *args, **kwargs):
        return await self._raytpu_forward(name, args, kwargs)

    forward.__name__ = name
    return forward


def tpu_slice(cls=None, *, jax_distributed=True):
    """Makes a class's Serve replica own one TPU slice (see the module doc).

    Apply it under @serve.deployment. With jax_distributed (the default),
    the host workers of a multi-host slice call jax.distributed.initialize
    before the class is built.
    """

    def wrap(user_cls):
        if not inspect.isclass(user_cls):
            raise TypeError("raytpu: tpu_slice decorates a class, got %r" % (user_cls,))
        attrs = {
            "_raytpu_user_class": user_cls,
            "_raytpu_jax_distributed": jax_distributed,
            "__module__": user_cls.__module__,
            "__doc__": user_cls.__doc__,
        }
        for name, member in inspect.getmembers(user_cls, callable):
            if name in _OWN_METHODS or (name.startswith("_") and name != "__call__"):
                continue
            attrs[name] = _forwarder(name)
        return type(user_cls.__name__, (_SliceOrchestrator,), attrs)

    if cls is not None:
        return wrap(cls)
    return wrap
