"""Helpers of the runtime's unit tests (not shipped).

The Go test (rayruntime TestPython) lays the runtime out as the backends
ship it: the launcher's files in $RAYTPU_TEST_LAUNCHER_DIR and the
replica package in $RAYTPU_TEST_REPLICA_DIR; both go on sys.path here.
"""

import collections.abc
import os
import sys

for _var in ("RAYTPU_TEST_LAUNCHER_DIR", "RAYTPU_TEST_REPLICA_DIR"):
    _dir = os.environ.get(_var)
    if not _dir:
        raise RuntimeError("%s is not set: run these tests through `go test ./rayruntime -run TestPython`" % _var)
    if _dir not in sys.path:
        sys.path.insert(0, _dir)

import _raytpu_runtime as rt  # noqa: E402

_LEAVES = {"object": dict, "array": list, "string": lambda: "x", "number": lambda: 1, "bool": lambda: True, "any": lambda: "x"}


class Recording(collections.abc.Mapping):
    """A read-only wire object that records the keys read from it, by wire
    type, in reads."""

    def __init__(self, type_name, data, reads):
        self._type, self._data, self._reads = type_name, data, reads

    def __getitem__(self, key):
        self._reads.setdefault(self._type, set()).add(key)
        return self._data[key]

    def __iter__(self):
        return iter(self._data)

    def __len__(self):
        return len(self._data)


def sample(type_name, reads, protocol=None):
    """A Recording of wire type type_name with every key of the protocol
    description set: wire types recursively, other values by their kind."""
    protocol = protocol or rt.PROTOCOL
    data = {}
    for key in rt.wire_keys(type_name).values():
        if key.get("type"):
            one = lambda: sample(key["type"], reads, protocol)  # noqa: E731
            data[key["name"]] = {"list": lambda: [one()], "map": lambda: {"a": one()}}.get(key.get("shape"), one)()
        else:
            data[key["name"]] = _LEAVES[key["kind"]]()
    return Recording(type_name, data, reads)


def described_types():
    """The wire types of the description, by name: {"read", "keys"}."""
    return {t["name"]: {"read": t["read"], "keys": {k["name"] for k in t["keys"]}} for t in rt.PROTOCOL["types"]}
