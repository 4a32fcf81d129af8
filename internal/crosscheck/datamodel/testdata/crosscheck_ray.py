"""Runs iter_jax_batches cases on real Ray Data and JAX (CPU) and prints,
for each case and host, the batches yielded and how the epoch ended.

split mode (one process):  python crosscheck_ray.py split CASES.json
    each case: rows, workers, batch, policy; the dataset is
    ray.data.range(rows) split with streaming_split(workers, equal=True) as
    Ray Train does, every split iterated in its own thread.
sync mode (one process per host, jax.distributed over gloo):
    python crosscheck_ray.py sync CASES.json RANK WORLD PORT
    each case: shards (rows per host), batch, policy, prefetch; host RANK
    iterates ray.data.range(shards[RANK]) with synchronize_batches=True.

Output: one JSON line per case and host: {"case", "host", "batches":
[[rows, pad], ...], "outcome", "error"}. Padding is -1, so padded rows are
the entries equal to -1.
"""
import json
import os
import sys
import tempfile
import threading

import numpy as np

PAD = -1


def kwargs(case):
    kw = {"batch_size": case["batch"], "prefetch_batches": case.get("prefetch", 1)}
    if case["policy"] == "Drop":
        kw["drop_last"] = True
    elif case["policy"] == "Pad":
        kw["paddings"] = PAD
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


def emit(i, host, res):
    batches, outcome, error = res
    print(json.dumps({"case": i, "host": host, "batches": batches, "outcome": outcome, "error": error}), flush=True)


def split_mode(cases):
    import ray

    ray.init(num_cpus=2, include_dashboard=False, _temp_dir=tempfile.mkdtemp(prefix="rtd-"), log_to_driver=False)
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
        for h, res in enumerate(out):
            emit(i, h, res)
    ray.shutdown()


def sync_mode(cases, rank, world, port):
    import jax

    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(f"127.0.0.1:{port}", world, rank)
    from jax.experimental.multihost_utils import sync_global_devices

    import ray

    # Every host runs its own local Ray instance, as every host of a slice
    # iterates its own shard.
    ray.init(num_cpus=1, include_dashboard=False, _temp_dir=tempfile.mkdtemp(prefix="rtd-"), log_to_driver=False)
    for i, case in enumerate(cases):
        ds = ray.data.range(case["shards"][rank], override_num_blocks=case.get("blocks", 2))
        res = consume(ds.iterator(), kwargs(case), True)
        emit(i, rank, res)
        sync_global_devices(f"case-{i}")
    sync_global_devices("done")


if __name__ == "__main__":
    cases = json.load(open(sys.argv[2]))
    if sys.argv[1] == "split":
        split_mode(cases)
    else:
        sync_mode(cases, int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
