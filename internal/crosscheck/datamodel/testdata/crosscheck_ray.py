"""Runs iter_jax_batches cases on real Ray Data and JAX (CPU) and prints,
for each case and host, the batches yielded and how the epoch ended.

    python crosscheck_ray.py

starts one local Ray instance (ray.init, 2 CPUs) and serves requests on
stdin, one JSON line each, {"mode": ..., "cases": [...], ...}, until stdin
closes; then it shuts Ray down. It prints {"ready": true} once ray.init has
returned. Every request is answered with its result lines and ends with
{"done": MODE, "error": TRACEBACK or ""}. The package's tests send their
requests in turn to one such process, so they share its Ray instance.

split: each case: rows, workers, batch, policy, sync; the dataset is
    ray.data.range(rows) split with streaming_split(workers, equal=True) as
    Ray Train does, every split iterated in its own thread of this process.
sync (also "world", "devices"): each case: shards (rows per host),
    batch, policy, prefetch. Every host is a Ray task in a fresh worker
    (max_calls=1, no retries) with `devices` JAX devices, one JAX process of
    `world` joined by jax.distributed over gloo (coordinator on 127.0.0.1,
    on a port free on every address when the request came: JAX's
    coordination service binds [::]:PORT and crashes its process when the
    port is taken);
    host RANK iterates ray.data.range(shards[RANK]) with
    synchronize_batches=True.
grid: each case: devices, source (range or items), rows, blocks (0: Ray's
    choice), batch (0: iter_jax_batches' default), policy, pad_columns,
    shuffle (local_shuffle_buffer_size, 0: none), seed, split (workers of
    a streaming_split(equal=True), 0: the whole dataset), reuse (unsplit
    only: iterate one materialized copy of the dataset, made by the first
    case of the same source, rows and blocks, so that many cases over one
    dataset cost one read; its blocks are the read's, in the order the
    read tasks finished). Cases run in one Ray task per device count, in a
    fresh worker process (max_calls=1) that sets
    --xla_force_host_platform_device_count=devices before it imports JAX;
    the dataset's own tasks run in the ordinary worker pool. When the case
    made one local batcher (unsplit, or split over one worker), the output
    also holds "blocks": the rows of every block it received, in order
    (its add method is wrapped to record them; it runs unchanged).

Output: one JSON line per case and host: {"case", "host", "batches":
[[rows, pad], ...], "outcome", "error"}. Padding is -1, so padded rows are
the entries equal to -1.
"""
import json
import os
import socket
import sys
import tempfile
import threading
import traceback

import numpy as np

PAD = -1


def kwargs(case):
    kw = {"prefetch_batches": case.get("prefetch", 1)}
    if case["batch"]:
        kw["batch_size"] = case["batch"]
    if case["policy"] == "Drop":
        kw["drop_last"] = True
    elif case["policy"] == "Pad":
        kw["paddings"] = {c: PAD for c in case["pad_columns"]} if case.get("pad_columns") else PAD
    if case.get("shuffle"):
        kw["local_shuffle_buffer_size"] = case["shuffle"]
        kw["local_shuffle_seed"] = case.get("seed")
    return kw


def local_rows(arr):
    """This host's rows of a global jax.Array, in order."""
    shards = sorted(arr.addressable_shards, key=lambda s: s.index[0].start or 0)
    return np.concatenate([np.asarray(s.data) for s in shards])


def consume(it, kw, sync):
    batches, outcome, error = [], "completes", ""
    try:
        for b in it.iter_jax_batches(synchronize_batches=sync, **kw):
            ids = local_rows(b["id"])
            pad = int((ids == PAD).sum())
            batches.append([int(ids.shape[0]) - pad, pad])
    except ValueError as e:
        outcome, error = "raises", str(e)
    return batches, outcome, error


def line(i, host, res):
    batches, outcome, error = res
    return {"case": i, "host": host, "batches": batches, "outcome": outcome, "error": error}


def split_cases(ray, cases):
    lines = []
    for i, case in enumerate(cases):
        ds = ray.data.range(case["rows"], override_num_blocks=case.get("blocks", 4))
        its = ds.streaming_split(case["workers"], equal=True)
        out = [None] * len(its)

        def run(h):
            out[h] = consume(its[h], kwargs(case), case.get("sync", False))

        ts = [threading.Thread(target=run, args=(h,)) for h in range(len(its))]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        lines += [line(i, h, res) for h, res in enumerate(out)]
    return lines


def sync_host(cases, rank, world, port, devices):
    """Runs in a fresh worker: one JAX process of `world`, joined by
    jax.distributed over gloo, iterating its own shard of every case."""
    os.environ["JAX_PLATFORMS"] = "cpu"
    os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={devices}"
    import jax

    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(f"127.0.0.1:{port}", world, rank)
    assert jax.local_device_count() == devices, jax.local_device_count()
    from jax.experimental.multihost_utils import sync_global_devices

    import ray

    out = []
    for i, case in enumerate(cases):
        ds = ray.data.range(case["shards"][rank], override_num_blocks=case.get("blocks", 2))
        out.append(consume(ds.iterator(), kwargs(case), True))
        sync_global_devices(f"case-{i}")
    sync_global_devices("done")
    return out


def free_port():
    """A TCP port no socket holds on any address now (IPv4 only on a
    machine without IPv6)."""
    family, addr = (socket.AF_INET6, "::") if socket.has_ipv6 else (socket.AF_INET, "0.0.0.0")
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.bind((addr, 0))
        return s.getsockname()[1]


def sync_cases(ray, cases, world, devices):
    # Every host is a worker of the one cluster, as the hosts of a slice
    # are in Ray Train, and iterates its own shard. A crashed host is not
    # retried: its peers would wait on a coordinator that is gone.
    port = free_port()
    host = ray.remote(num_cpus=0, max_calls=1, max_retries=0)(sync_host)
    refs = [host.remote(cases, rank, world, port, devices) for rank in range(world)]
    lines = []
    for rank, results in enumerate(ray.get(refs)):
        lines += [line(i, rank, res) for i, res in enumerate(results)]
    return lines


def grid_dataset(ray, case):
    blocks = {"override_num_blocks": case["blocks"]} if case["blocks"] else {}
    if case["source"] == "items":
        items = [{"id": i, "x": float(i) / 2} for i in range(case["rows"])]
        return ray.data.from_items(items, **blocks)
    return ray.data.range(case["rows"], **blocks)


def grid_run(devices, cases):
    """Runs in a fresh worker; JAX gets `devices` CPU devices."""
    os.environ["JAX_PLATFORMS"] = "cpu"
    os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={devices}"
    import jax
    import ray

    assert jax.local_device_count() == devices, jax.local_device_count()
    from ray.data._internal import batcher

    # Each batcher records the rows of the blocks added to it. Per
    # instance: an iterator abandoned by a ValueError may still be adding
    # blocks from its prefetch thread while the next case runs.
    created = []
    for cls in (batcher.Batcher, batcher.ShufflingBatcher):
        init, orig = cls.__init__, cls.add

        def __init__(self, *a, _init=init, **kw):
            _init(self, *a, **kw)
            self.rt_added = []
            created.append(self)

        def add(self, block, _orig=orig):
            self.rt_added.append(batcher.BlockAccessor.for_block(block).num_rows())
            return _orig(self, block)

        cls.__init__, cls.add = __init__, add
    out = []
    materialized = {}
    for case in cases:
        kw = kwargs(case)
        del created[:]
        if case["split"]:
            its = grid_dataset(ray, case).streaming_split(case["split"], equal=True)
            res = [None] * len(its)

            def run(h):
                res[h] = consume(its[h], kw, False)

            ts = [threading.Thread(target=run, args=(h,)) for h in range(len(its))]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
        else:
            if case.get("reuse"):
                key = (case["source"], case["rows"], case["blocks"])
                if key not in materialized:
                    materialized[key] = grid_dataset(ray, case).materialize()
                ds = materialized[key]
            else:
                ds = grid_dataset(ray, case)
            res = [consume(ds.iterator(), kw, False)]
        # The blocks of the one batcher this case's iterators made; a split
        # over several workers makes one per worker, on threads of Ray's.
        blocks = None
        if len(created) == 1:
            blocks = [n for n in created[0].rt_added if n > 0]
        elif not created and not case["split"]:
            blocks = []
        out.append([list(r) + [blocks] for r in res])
    return out


def grid_cases(ray, cases):
    runner = ray.remote(num_cpus=0, max_calls=1)(grid_run)
    by_devices = {}
    for i, case in enumerate(cases):
        by_devices.setdefault(case["devices"], []).append(i)
    refs = {}
    for d, idx in sorted(by_devices.items()):
        refs[d] = runner.remote(d, [cases[i] for i in idx])
    lines = []
    for d, idx in sorted(by_devices.items()):
        for i, hosts in zip(idx, ray.get(refs[d])):
            for h, (batches, outcome, error, blocks) in enumerate(hosts):
                ln = line(i, h, (batches, outcome, error))
                if blocks is not None:
                    ln["blocks"] = blocks
                lines.append(ln)
    return lines


def serve():
    import ray

    temp = tempfile.mkdtemp(prefix="rtd-")
    ray.init(num_cpus=2, include_dashboard=False, _temp_dir=temp, log_to_driver=False)
    print(json.dumps({"ready": True}), flush=True)
    for req in sys.stdin:
        req = json.loads(req)
        mode, error = req["mode"], ""
        try:
            if mode == "split":
                lines = split_cases(ray, req["cases"])
            elif mode == "sync":
                lines = sync_cases(ray, req["cases"], req["world"], req["devices"])
            elif mode == "grid":
                lines = grid_cases(ray, req["cases"])
            else:
                raise ValueError(f"unknown mode {mode!r}")
            for ln in lines:
                print(json.dumps(ln), flush=True)
        except Exception:
            # A crashed worker's own words are in its worker-*.err file.
            error = traceback.format_exc() + f"Ray's logs: {temp}/session_latest/logs\n"
        print(json.dumps({"done": mode, "error": error}), flush=True)
    ray.shutdown()


if __name__ == "__main__":
    serve()
