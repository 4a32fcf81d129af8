"""A model that scales its input by a factor chosen per application, so a
test can tell which application answered. It answers JSON over HTTP and
raytpu's Predictor service over gRPC; "sleep" makes it slow, "fail" makes
it raise."""

import asyncio

import numpy as np
from ray import serve

from raytpu.serve.v1 import tensor


@serve.deployment(ray_actor_options={"num_cpus": 0.1})
class Scale:
    def __init__(self, factor):
        self.factor = float(factor)

    async def __call__(self, request):
        body = await request.json()
        if body.get("sleep"):
            await asyncio.sleep(float(body["sleep"]))
        if body.get("fail"):
            raise ValueError("scale_model asked to fail")
        return {"y": [self.factor * v for v in body["x"]], "factor": self.factor}

    async def Predict(self, request):
        ins = tensor.inputs(request)
        if "sleep" in ins:
            await asyncio.sleep(float(ins["sleep"]))
        return tensor.response({"y": ins["x"] * np.float32(self.factor), "factor": np.float32(self.factor)})


def build(args):
    return Scale.bind(args.get("factor", 1))
