"""The pure part of raytpu's replica runtime: how a slice deployment's
user_config, reservation and placement group name are read and built.

The keys come from raytpu_protocol.json, shipped in this package.
"""

from . import _raytpu_runtime as rt

RESERVATION_KEY = rt.PROTOCOL["reservation_key"]
RESERVATION_VERSION = rt.PROTOCOL["reservation_version"]
# user_config[PROFILER_KEY] = {"port": N} starts jax.profiler's server on
# every host (port 0: a free one); the replica prints a PROFILER_PREFIX line
# with a JSON object per host (app, deployment, replica, host, node_id, ip,
# port, pid; or error) on its stdout, which raytpu reads by actor id.
PROFILER_KEY = rt.PROTOCOL["profiler_key"]


def split_user_config(user_config):
    """Splits a slice deployment's user_config into its reservation (a
    SliceReservation of the format this runtime reads), its profiler config
    (a ReplicaProfiler, or None) and the rest, the user class's own."""
    config = dict(user_config or {})
    reservation = config.pop(RESERVATION_KEY, None)
    profiler = config.pop(PROFILER_KEY, None)
    if reservation is None:
        raise ValueError(
            "raytpu: user_config has no %r: deploy this deployment with raytpu "
            "(serve.Deployment with AcceleratorConfig.Topology) so that each "
            "replica knows the slice it owns" % RESERVATION_KEY
        )
    if reservation.get("version") != RESERVATION_VERSION:
        raise ValueError(
            "raytpu: user_config.%s.version %r is not supported by this replica runtime (want %d): "
            "deploy with the raytpu release that shipped this runtime"
            % (RESERVATION_KEY, reservation.get("version"), RESERVATION_VERSION)
        )
    if profiler is not None:
        profiler = {"port": profiler.get("port", 0)}
    return reservation, profiler, config


def reservation_call(res):
    """A SliceReservation as the call that reserves it: the keyword
    arguments of ray.util.tpu.slice_placement_group (but name), the head
    timeout (None: Ray's default), the pod type and a description."""
    if res["num_bundles"] != res["num_hosts"]:
        raise ValueError(
            "raytpu: user_config.%s.num_bundles is %r for %r hosts: the replica runtime runs one "
            "host worker per bundle, so each bundle must hold a whole host" % (RESERVATION_KEY, res["num_bundles"], res["num_hosts"]))
    timeout = res["head_reservation_timeout_s"] or None
    what = "TPU %s %s slice (%s, pod type %s, %d hosts of %d chips)" % (
        res["accelerator_version"], res["topology"], res["accelerator_type"], res["pod_type"],
        res["num_hosts"], res["chips_per_host"])
    kwargs = {
        "topology": res["topology"],
        "accelerator_version": res["accelerator_version"],
        "resources_per_bundle": res["resources_per_bundle"],
        "strategy": res["strategy"],
        "head_reservation_timeout_s": timeout,
    }
    return {"kwargs": kwargs, "timeout": timeout, "pod_type": res["pod_type"], "what": what}


def slice_group_name(app, deployment, replica):
    """The slice placement group name of a replica (rayruntime.SliceGroupName)."""
    return "%s:%s:%s:%s" % (rt.PROTOCOL["slice_group_prefix"], app, deployment, replica)


def replica_where():
    """The replica's app, deployment and replica id; {} outside Serve."""
    from ray import serve
    from ray.serve.exceptions import RayServeException

    try:
        ctx = serve.get_replica_context()
    except RayServeException:  # not a replica: Serve says so
        return {}
    return {"app": ctx.app_name, "deployment": ctx.deployment, "replica": ctx.replica_id.unique_id}


def worker_id(info):
    """The order of a host in its slice: its TPU worker id, then its bundle."""
    try:
        return (int(info["labels"].get("ray.io/tpu-worker-id", "")), info["bundle"])
    except ValueError:  # no numeric TPU worker id (not a TPU host): last, by bundle
        return (1 << 30, info["bundle"])


def bundle_options(bundle):
    """The actor options that fill one bundle of the slice."""
    opts = {"num_cpus": bundle.get("CPU", 0)}
    if bundle.get("GPU"):
        opts["num_gpus"] = bundle["GPU"]
    if bundle.get("memory"):
        opts["memory"] = bundle["memory"]
    opts["resources"] = {k: v for k, v in bundle.items() if k not in ("CPU", "GPU", "memory")}
    return opts
