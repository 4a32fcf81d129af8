"""Converts raytpu.serve.v1 Tensors to numpy arrays and back.

A Serve deployment that answers raytpu's Predictor service:

    from raytpu.serve.v1 import predictor_pb2, tensor

    @serve.deployment
    class Model:
        def Predict(self, request):
            x = tensor.inputs(request)["x"]          # dict of numpy arrays
            return tensor.response({"y": 2 * x})     # a PredictResponse

The module and the generated predictor_pb2 / predictor_pb2_grpc must be
importable by Serve's proxy, which runs in the cluster's base Python
environment (no runtime_env): put the directory holding "raytpu/" on every
node's PYTHONPATH, or install it into the image.
"""

import numpy as np

from raytpu.serve.v1 import predictor_pb2

# The servicer function to list in the Serve config's
# grpc_options.grpc_servicer_functions.
SERVICER_FUNCTION = "raytpu.serve.v1.predictor_pb2_grpc.add_PredictorServicer_to_server"


def to_numpy(t):
    """Returns the numpy array a Tensor holds (a copy; it owns its data)."""
    shape = tuple(int(d) for d in t.shape)
    if t.raw:
        dtype = np.dtype(t.dtype or "float32").newbyteorder("<")
        arr = np.frombuffer(t.raw, dtype=dtype)
    elif t.dtype in ("", "float32"):
        arr = np.asarray(t.float_val, dtype=np.float32)
    else:
        raise ValueError("raytpu: tensor of dtype %r has no raw bytes (float_val holds float32 only)" % t.dtype)
    want = int(np.prod(shape)) if shape else 1
    if arr.size != want:
        raise ValueError("raytpu: tensor of shape %s needs %d elements, has %d" % (list(shape), want, arr.size))
    return arr.reshape(shape).astype(arr.dtype.newbyteorder("="), copy=True)


def from_numpy(a):
    """Returns a Tensor holding a numpy array (or anything np.asarray takes)."""
    arr = np.asarray(a)
    return predictor_pb2.Tensor(
        dtype=arr.dtype.name,
        shape=list(arr.shape),
        raw=arr.astype(arr.dtype.newbyteorder("<"), copy=False).tobytes(order="C"),
    )


def inputs(request):
    """Returns a PredictRequest's inputs as a dict of numpy arrays."""
    return {name: to_numpy(t) for name, t in request.inputs.items()}


def response(outputs):
    """Returns a PredictResponse holding a dict of arrays."""
    return predictor_pb2.PredictResponse(outputs={name: from_numpy(a) for name, a in outputs.items()})
