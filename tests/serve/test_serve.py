"""test_serve.py: mlc-serve speaks the Open Inference Protocol (KServe v2).

Every endpoint; JSON and binary-extension inference matching `mlc-onnx run`
bit for bit; each kind of bad request answered with its 4xx while the server
stays up; a load test (8 clients x 200 requests, each client its own input,
every answer checked); batching (--max-batch) keeping each request's rows
its own; the queue's 503; metrics and the access log; reload on SIGHUP and
through the repository endpoint without a failed request; drain on SIGTERM.
Traffic on 127.0.0.1 only.

usage: test_serve.py MLC_ONNX MLC_SERVE MODELS_DIR TMP_DIR
Prints "test_serve: N passed, N failed"; exit status 1 when any failed.
"""
import http.client
import json
import os
import re
import select
import signal
import socket
import subprocess
import sys
import threading
import time

import numpy as np

CLI, SERVER, MODELS, TMP = sys.argv[1:5]
passed = failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL: " + what, flush=True)
    return cond


def sh(*args):
    r = subprocess.run(list(args), capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("%s: %s" % (" ".join(args), r.stderr))
    return r.stdout


def compile_model(onnx_path, name):
    so = os.path.join(TMP, name + ".so")
    sh(CLI, "compile", onnx_path, "-o", so)
    return so


def run_ref(so, inputs):
    """Outputs of `mlc-onnx run` on |inputs| (list of arrays, graph order)."""
    d = os.path.join(TMP, "ref%d" % run_ref.n)
    run_ref.n += 1
    os.makedirs(d)
    args = [CLI, "run", so, "--output-dir", d, "--threads", "1"]
    for i, a in enumerate(inputs):
        p = os.path.join(d, "in%d.npy" % i)
        np.save(p, a)
        args += ["--input", p]
    sh(*args)
    outs = []
    k = 0
    while os.path.exists(os.path.join(d, "output_%d.npy" % k)):
        outs.append(np.load(os.path.join(d, "output_%d.npy" % k)))
        k += 1
    return outs


run_ref.n = 0


class Server:
    def __init__(self, models, *opts, cmd=None):
        self.log = os.path.join(TMP, "access%d.log" % Server.n)
        self.err = open(os.path.join(TMP, "server%d.err" % Server.n), "w")
        Server.n += 1
        argv = (cmd or [SERVER]) + list(models) + ["--port", "0", "--access-log", self.log] + list(opts)
        self.p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=self.err, text=True)
        line = self.p.stdout.readline()
        m = re.search(r"listening on http://127\.0\.0\.1:(\d+)", line)
        if not m:
            self.p.kill()
            raise RuntimeError("server did not start: %r (%s)" % (line, open(self.err.name).read()))
        self.port = int(m.group(1))

    def conn(self):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)

    def req(self, method, path, body=None, headers=None, conn=None):
        c = conn or self.conn()
        c.request(method, path, body, headers or {})
        r = c.getresponse()
        data = r.read()
        if conn is None:
            c.close()
        return r.status, dict((k.lower(), v) for k, v in r.getheaders()), data

    def json(self, method, path, body=None, headers=None):
        st, h, data = self.req(method, path, body, headers)
        try:
            return st, json.loads(data)
        except ValueError:
            return st, {"unparsed": data[:200]}

    def alive(self):
        try:
            return self.req("GET", "/v2/health/live")[0] == 200
        except OSError:
            return False

    def stop(self, sig=signal.SIGTERM, timeout=30):
        self.p.send_signal(sig)
        try:
            return self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            return -999


Server.n = 0


def infer_body(inputs, names, dtypes, binary_in=False, outputs=None, rid=None, params=None):
    """(body, headers) of an infer request."""
    req = {"inputs": []}
    if rid is not None:
        req["id"] = rid
    if params:
        req["parameters"] = params
    blobs = []
    for a, n, dt in zip(inputs, names, dtypes):
        t = {"name": n, "datatype": dt, "shape": list(a.shape)}
        if binary_in:
            b = np.ascontiguousarray(a).tobytes()
            t["parameters"] = {"binary_data_size": len(b)}
            blobs.append(b)
        else:
            t["data"] = a.flatten().tolist()
        req["inputs"].append(t)
    if outputs is not None:
        req["outputs"] = outputs
    head = json.dumps(req).encode()
    if binary_in or any(o.get("parameters", {}).get("binary_data") for o in outputs or []):
        pass
    headers = {"Content-Type": "application/json"}
    if binary_in:
        headers = {"Inference-Header-Content-Length": str(len(head)), "Content-Type": "application/octet-stream"}
    return head + b"".join(blobs), headers


NP = {"FP32": np.float32, "FP64": np.float64, "INT64": np.int64, "INT32": np.int32, "BOOL": np.bool_,
      "UINT8": np.uint8, "INT8": np.int8, "FP16": np.float16}


def decode(status, headers, data):
    """The outputs of an infer answer, by name, as arrays."""
    hl = int(headers.get("inference-header-content-length", len(data)))
    j = json.loads(data[:hl])
    off = hl
    outs = {}
    for o in j["outputs"]:
        dt = NP[o["datatype"]]
        if "data" in o:
            outs[o["name"]] = np.array(o["data"], dtype=dt).reshape(o["shape"])
        else:
            n = o["parameters"]["binary_data_size"]
            outs[o["name"]] = np.frombuffer(data[off:off + n], dtype=np.dtype(dt).newbyteorder("<")).reshape(o["shape"])
            off += n
    return j, outs


def same(a, b):
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


# ---- models ----------------------------------------------------------------

mlp = compile_model(os.path.join(MODELS, "mlp.onnx"), "mlp")
dyn = compile_model(os.path.join(MODELS, "mlp_dyn.onnx"), "dyn")
cnn = compile_model(os.path.join(MODELS, "cnn.onnx"), "cnn")
enc = compile_model(os.path.join(MODELS, "encoder.onnx"), "encoder")

# A model of several inputs and outputs and datatypes, written here.
import onnx
from onnx import TensorProto, helper, numpy_helper

g = helper.make_graph(
    [helper.make_node("Gather", ["a", "idx"], ["g"], axis=1),
     helper.make_node("Not", ["b"], ["nb"]),
     helper.make_node("Cast", ["idx"], ["i32"], to=TensorProto.INT32)],
    "multi",
    [helper.make_tensor_value_info("a", TensorProto.FLOAT, ["N", 4]),
     helper.make_tensor_value_info("idx", TensorProto.INT64, [2]),
     helper.make_tensor_value_info("b", TensorProto.BOOL, [3])],
    [helper.make_tensor_value_info("g", TensorProto.FLOAT, ["N", 2]),
     helper.make_tensor_value_info("nb", TensorProto.BOOL, [3]),
     helper.make_tensor_value_info("i32", TensorProto.INT32, [2])])
mm = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
onnx.save(mm, os.path.join(TMP, "multi.onnx"))
multi = compile_model(os.path.join(TMP, "multi.onnx"), "multi")

# A model slow enough (three 3x3 convs on 64x64) to fill a queue.
wr = np.random.default_rng(3)
conv_w = [numpy_helper.from_array((wr.standard_normal(s) * 0.05).astype(np.float32), "w%d" % i)
          for i, s in enumerate([(96, 16, 3, 3), (96, 96, 3, 3), (96, 96, 3, 3)])]
g = helper.make_graph(
    [helper.make_node("Conv", ["x", "w0"], ["c0"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["c0"], ["r0"]),
     helper.make_node("Conv", ["r0", "w1"], ["c1"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["c1"], ["r1"]),
     helper.make_node("Conv", ["r1", "w2"], ["c2"], pads=[1, 1, 1, 1]),
     helper.make_node("GlobalAveragePool", ["c2"], ["y"])],
    "slow", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 64, 64])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 96, 1, 1])], initializer=conv_w)
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), os.path.join(TMP, "slow.onnx"))
slow = compile_model(os.path.join(TMP, "slow.onnx"), "slow")

# mlp with other weights (the same signature): what a reload swaps in.
m2 = onnx.load(os.path.join(MODELS, "mlp.onnx"))
for init in m2.graph.initializer:
    a = numpy_helper.to_array(init) * 0.5
    init.CopyFrom(numpy_helper.from_array(a.astype(np.float32), init.name))
onnx.save(m2, os.path.join(TMP, "mlp2.onnx"))
mlp2 = compile_model(os.path.join(TMP, "mlp2.onnx"), "mlp2")

rng = np.random.default_rng(7)
x_mlp = rng.standard_normal((1, 784)).astype(np.float32)
x_cnn = rng.standard_normal((1, 3, 32, 32)).astype(np.float32)
x_enc = rng.standard_normal((1, 16, 32)).astype(np.float32)
ref_mlp = run_ref(mlp, [x_mlp])[0]
ref_mlp2 = run_ref(mlp2, [x_mlp])[0]
ref_cnn = run_ref(cnn, [x_cnn])[0]
ref_enc = run_ref(enc, [x_enc])[0]
x_slow = rng.standard_normal((1, 16, 64, 64)).astype(np.float32)
ref_slow = run_ref(slow, [x_slow])[0]
check(not same(ref_mlp, ref_mlp2), "the two mlp models differ")

# ---- endpoints ---------------------------------------------------------------

S = Server([mlp, dyn, cnn, "enc=" + enc, multi], "--sessions", "2", "--threads", "1", "--max-body", "1M",
           "--timeout", "2", "--max-batch", "8")
st, j = S.json("GET", "/v2/health/live")
check(st == 200 and j == {"live": True}, "live: %s %s" % (st, j))
st, j = S.json("GET", "/v2/health/ready")
check(st == 200 and j == {"ready": True}, "ready: %s %s" % (st, j))
st, j = S.json("GET", "/v2")
check(st == 200 and j.get("name") == "mlc-onnx" and "binary_tensor_data" in j.get("extensions", []),
      "server metadata: %s %s" % (st, j))
st, j = S.json("GET", "/v2/models/mlp")
check(st == 200 and j == {"name": "mlp", "versions": ["1"], "platform": "mlc-onnx",
                          "inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 784]}],
                          "outputs": [{"name": "y", "datatype": "FP32", "shape": [1, 10]}]},
      "mlp metadata: %s %s" % (st, j))
st, j = S.json("GET", "/v2/models/dyn")
check(st == 200 and j["inputs"][0]["shape"] == [-1, 784] and j["outputs"][0]["shape"] == [-1, 10],
      "symbolic dims are -1: %s" % j)
st, j = S.json("GET", "/v2/models/multi")
check(st == 200 and [t["datatype"] for t in j["inputs"]] == ["FP32", "INT64", "BOOL"]
      and [t["datatype"] for t in j["outputs"]] == ["FP32", "BOOL", "INT32"], "multi metadata: %s" % j)
st, j = S.json("GET", "/v2/models/enc/versions/1")
check(st == 200 and j["name"] == "enc", "NAME= and versions/1: %s %s" % (st, j))
st, j = S.json("GET", "/v2/models/mlp/ready")
check(st == 200 and j == {"name": "mlp", "ready": True}, "model ready: %s %s" % (st, j))
st, j = S.json("GET", "/v2/models/mlp/versions/1/ready")
check(st == 200, "versions/1/ready: %s" % st)
st, j = S.json("GET", "/v2/models/mlp/versions/2")
check(st == 404 and "version" in j.get("error", ""), "unknown version: %s %s" % (st, j))
st, j = S.json("GET", "/v2/models/nosuch")
check(st == 404 and "nosuch" in j.get("error", ""), "unknown model: %s %s" % (st, j))
st, j = S.json("POST", "/v2/models/nosuch/infer", "{}")
check(st == 404, "infer on an unknown model: %s" % st)
st, j = S.json("GET", "/v2/frobnicate")
check(st == 404 and "error" in j, "unknown path: %s %s" % (st, j))
st, h, _ = S.req("GET", "/v2/models/mlp/infer")
check(st == 405 and "POST" in h.get("allow", ""), "GET on infer: %s %s" % (st, h))
st, j = S.json("POST", "/v2/health/live")
check(st == 405, "POST on live: %s" % st)
st, j = S.json("POST", "/v2/repository/index")
check(st == 200 and sorted(m["name"] for m in j) == ["cnn", "dyn", "enc", "mlp", "multi"]
      and all(m["state"] == "READY" for m in j), "repository index: %s" % j)

# ---- inference -----------------------------------------------------------------

for name, so, x, ref in [("mlp", mlp, x_mlp, ref_mlp), ("cnn", cnn, x_cnn, ref_cnn), ("enc", enc, x_enc, ref_enc)]:
    body, hd = infer_body([x], ["x"], ["FP32"], rid="req-" + name)
    st, h, data = S.req("POST", "/v2/models/%s/infer" % name, body, hd)
    if check(st == 200, "%s JSON infer: %s %s" % (name, st, data[:200])):
        j, outs = decode(st, h, data)
        check(j["model_name"] == name and j["id"] == "req-" + name and j["model_version"] == "1",
              "%s answer fields: %s" % (name, {k: j[k] for k in j if k != "outputs"}))
        check(same(outs["y"], ref), "%s JSON output == mlc-onnx run's" % name)
    body, hd = infer_body([x], ["x"], ["FP32"], binary_in=True, params={"binary_data_output": True})
    st, h, data = S.req("POST", "/v2/models/%s/infer" % name, body, hd)
    if check(st == 200 and "inference-header-content-length" in h, "%s binary infer: %s %s" % (name, st, data[:200])):
        j, outs = decode(st, h, data)
        check(same(outs["y"], ref), "%s binary output == mlc-onnx run's, byte for byte" % name)
        check(h.get("content-type") == "application/octet-stream", "binary content type: %s" % h.get("content-type"))

# nested data, binary in + JSON out, JSON in + binary out per output
nested = {"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 3, 32, 32], "data": x_cnn.tolist()}]}
st, h, data = S.req("POST", "/v2/models/cnn/infer", json.dumps(nested))
check(st == 200 and same(decode(st, h, data)[1]["y"], ref_cnn), "nested data: %s" % st)
body, hd = infer_body([x_mlp], ["x"], ["FP32"], binary_in=True)
st, h, data = S.req("POST", "/v2/models/mlp/infer", body, hd)
check(st == 200 and "inference-header-content-length" not in h and same(decode(st, h, data)[1]["y"], ref_mlp),
      "binary in, JSON out: %s" % st)
body, hd = infer_body([x_mlp], ["x"], ["FP32"], outputs=[{"name": "y", "parameters": {"binary_data": True}}])
st, h, data = S.req("POST", "/v2/models/mlp/infer", body, hd)
check(st == 200 and "inference-header-content-length" in h and same(decode(st, h, data)[1]["y"], ref_mlp),
      "JSON in, binary out: %s" % st)

# several inputs, outputs and datatypes; requested outputs in a chosen order
a = rng.standard_normal((3, 4)).astype(np.float32)
idx = np.array([3, 1], dtype=np.int64)
b = np.array([True, False, True])
refs = run_ref(multi, [a, idx, b])
body, hd = infer_body([a, idx, b], ["a", "idx", "b"], ["FP32", "INT64", "BOOL"])
st, h, data = S.req("POST", "/v2/models/multi/infer", body, hd)
if check(st == 200, "multi infer: %s %s" % (st, data[:300])):
    j, outs = decode(st, h, data)
    check([o["name"] for o in j["outputs"]] == ["g", "nb", "i32"], "multi outputs: %s" % j["outputs"])
    check(same(outs["g"], refs[0]) and same(outs["nb"], refs[1]) and same(outs["i32"], refs[2]),
          "multi outputs == mlc-onnx run's")
body, hd = infer_body([a, idx, b], ["a", "idx", "b"], ["FP32", "INT64", "BOOL"], binary_in=True,
                      outputs=[{"name": "i32"}, {"name": "g", "parameters": {"binary_data": True}}])
st, h, data = S.req("POST", "/v2/models/multi/infer", body, hd)
if check(st == 200, "multi binary infer: %s %s" % (st, data[:300])):
    j, outs = decode(st, h, data)
    check([o["name"] for o in j["outputs"]] == ["i32", "g"] and same(outs["g"], refs[0]) and same(outs["i32"], refs[2]),
          "requested outputs, in order, mixed JSON and binary: %s" % j["outputs"])
# a symbolic batch of 5
x5 = rng.standard_normal((5, 784)).astype(np.float32)
ref5 = run_ref(dyn, [x5])[0]
body, hd = infer_body([x5], ["x"], ["FP32"])
st, h, data = S.req("POST", "/v2/models/dyn/infer", body, hd)
check(st == 200 and same(decode(st, h, data)[1]["y"], ref5), "symbolic batch of 5: %s" % st)

# ---- bad requests: the right 4xx, the server stays up ------------------------------

xs = x_mlp.flatten().tolist()


def bad(desc, want, body, headers=None, model="mlp", needle=None):
    try:
        st, h, data = S.req("POST", "/v2/models/%s/infer" % model, body, headers)
    except OSError as e:
        check(False, "%s: %s" % (desc, e))
        return
    try:
        err = json.loads(data).get("error", "")
    except ValueError:
        err = None
    check(st == want and err, "%s: status %s (want %s), body %r" % (desc, st, want, data[:200]))
    if needle:
        check(needle in (err or ""), "%s: message %r lacks %r" % (desc, err, needle))
    check(S.alive(), "%s: server still up" % desc)


def one(**kw):
    t = {"name": "x", "datatype": "FP32", "shape": [1, 784], "data": xs}
    t.update(kw)
    return json.dumps({"inputs": [t]})


bad("malformed JSON", 400, '{"inputs": [', needle="malformed JSON")
bad("not an object", 400, "[1, 2]")
bad("empty body", 400, "")
bad("inputs not an array", 400, '{"inputs": 3}')
bad("missing input", 400, '{"inputs": []}', needle='"x" is missing')
bad("unknown input", 400, json.dumps({"inputs": [{"name": "zz", "datatype": "FP32", "shape": [1], "data": [1]}]}),
    needle="zz")
bad("input twice", 400, json.dumps({"inputs": [json.loads(one())["inputs"][0]] * 2}), needle="twice")
bad("wrong datatype", 400, one(datatype="INT64"), needle="FP32")
bad("unknown datatype", 400, one(datatype="FP128"))
bad("wrong rank", 400, one(shape=[784]), needle="rank")
bad("wrong static dim", 400, one(shape=[1, 783]), needle="784")
bad("negative dim", 400, one(shape=[-1, 784]))
bad("too few values", 400, one(data=xs[:-1]), needle="783")
bad("strings as data", 400, one(data=["a"] * 784))
bad("huge declared shape", 400, json.dumps({"inputs": [{"name": "x", "datatype": "FP32",
                                                           "shape": [2 ** 40, 2 ** 40], "data": [1]}]}), model="dyn")
bad("huge declared shape, binary", 400,
    json.dumps({"inputs": [{"name": "x", "datatype": "FP32", "shape": [2 ** 40, 784],
                            "parameters": {"binary_data_size": 4 * 784}}]}) + "x" * 3136,
    {"Inference-Header-Content-Length": str(len(json.dumps({"inputs": [{"name": "x", "datatype": "FP32",
                                                                        "shape": [2 ** 40, 784], "parameters": {
                                                                            "binary_data_size": 4 * 784}}]})))},
    model="dyn")
body, hd = infer_body([x_mlp], ["x"], ["FP32"], binary_in=True)
bad("truncated binary body", 400, body[:-10], hd, needle="truncated")
bad("binary bytes left over", 400, body + b"\0" * 8, hd, needle="left over")
bad("bad Inference-Header-Content-Length", 400, body, {"Inference-Header-Content-Length": "12x"})
bad("Inference-Header-Content-Length past the body", 400, body,
    {"Inference-Header-Content-Length": str(len(body) + 1)})
bad("binary_data_size without the header", 400, body[:int(hd["Inference-Header-Content-Length"])])
bad("unknown requested output", 400, json.dumps(dict(json.loads(one()), outputs=[{"name": "nope"}])), needle="nope")
bad("a value out of INT64 range", 400,
    json.dumps({"inputs": [{"name": "a", "datatype": "FP32", "shape": [1, 4], "data": [1, 2, 3, 4]},
                           {"name": "idx", "datatype": "INT64", "shape": [2], "data": [0, 1.5]},
                           {"name": "b", "datatype": "BOOL", "shape": [3], "data": [True, False, True]}]}),
    model="multi", needle="whole numbers")
bad("index out of range (the model's own check fails the run)", 500,
    json.dumps({"inputs": [{"name": "a", "datatype": "FP32", "shape": [1, 4], "data": [1, 2, 3, 4]},
                           {"name": "idx", "datatype": "INT64", "shape": [2], "data": [0, 9]},
                           {"name": "b", "datatype": "BOOL", "shape": [3], "data": [True, False, True]}]}),
    model="multi", needle="Gather")


def raw(payload, wait=5.0, trickle=None):
    """Sends |payload| on a fresh socket (then |trickle| bytes one per 0.3 s),
    returns (status, everything read until the server closes)."""
    s = socket.create_connection(("127.0.0.1", S.port), timeout=wait)
    s.sendall(payload)
    got = b""
    try:
        for ch in trickle or b"":  # until the server answers
            if select.select([s], [], [], 0.3)[0]:
                break
            s.sendall(bytes([ch]))
        while True:
            d = s.recv(65536)
            if not d:
                break
            got += d
    except OSError:
        pass
    s.close()
    m = re.match(rb"HTTP/1\.[01] (\d+)", got)
    return (int(m.group(1)) if m else None), got


# a declared Content-Length past --max-body: 413 before the body is sent
st, got = raw(b"POST /v2/models/mlp/infer HTTP/1.1\r\nHost: t\r\nContent-Length: %d\r\n\r\n" % ((1 << 20) + 1))
check(st == 413 and b"max-body" in got, "Content-Length past --max-body: %s %r" % (st, got[:100]))
# a chunked body past --max-body
st, got = raw(b"POST /v2/models/mlp/infer HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n" +
              b"".join(b"%x\r\n%s\r\n" % (65536, b" " * 65536) for _ in range(20)) + b"0\r\n\r\n", wait=10)
check(st == 413, "chunked body past --max-body: %s %r" % (st, got[:100]))
# a slow client: a body still arriving after --timeout (2 s) is a 408
t0 = time.time()
st, got = raw(b"POST /v2/models/mlp/infer HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\n", wait=10,
              trickle=b" " * 12)
check(st == 408, "slow client: %s %r" % (st, got[:120]))
# a stalled client is disconnected after --timeout; others are served meanwhile
s = socket.create_connection(("127.0.0.1", S.port), timeout=10)
s.sendall(b"POST /v2/models/mlp/infer HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\n{")
body, hd = infer_body([x_mlp], ["x"], ["FP32"])
st, h, data = S.req("POST", "/v2/models/mlp/infer", body, hd)
check(st == 200, "served while another client stalls: %s" % st)
t0 = time.time()
try:
    d = s.recv(100)
except OSError:
    d = b""
check(d == b"" and time.time() - t0 < 8, "stalled client closed after the timeout (%r after %.1f s)" % (d, time.time() - t0))
s.close()
# garbage instead of HTTP
st, got = raw(b"\x00\x01GARBAGE\r\n\r\n")
check(S.alive(), "garbage request: server still up")

# ---- load: 8 clients x 200 requests, each its own input --------------------------------

NCLI, NREQ = 8, 200
xin = [rng.standard_normal((1, 784)).astype(np.float32) for _ in range(NCLI)]
want = [run_ref(dyn, [x])[0] for x in xin]
results = [None] * NCLI


def client(k, model, binary):
    c = S.conn()
    ok = 0
    first = None
    body, hd = infer_body([xin[k]], ["x"], ["FP32"], binary_in=binary, params={"binary_data_output": binary})
    try:
        for _ in range(NREQ):
            st, h, data = S.req("POST", "/v2/models/%s/infer" % model, body, hd, conn=c)
            if st != 200:
                continue
            y = decode(st, h, data)[1]["y"]
            if first is None:
                first = data
            if data == first and same(y, want[k]):
                ok += 1
    except Exception as e:  # noqa: BLE001 (a failed client counts as failed requests)
        print("client %d: %s" % (k, e))
    c.close()
    results[k] = ok


for model, binary in [("dyn", False), ("dyn", True)]:
    t0 = time.time()
    ths = [threading.Thread(target=client, args=(k, model, binary)) for k in range(NCLI)]
    for t in ths:
        t.start()
    for t in ths:
        t.join()
    check(results == [NREQ] * NCLI, "load (%s, %s): correct and identical answers per client: %s" %
          (model, "binary" if binary else "JSON", results))
    print("load %s %s: %d requests in %.2f s" % (model, "binary" if binary else "JSON", NCLI * NREQ, time.time() - t0))

st, h, data = S.req("GET", "/metrics")
text = data.decode()
check(st == 200 and h.get("content-type", "").startswith("text/plain"), "metrics: %s %s" % (st, h))
lines = [l for l in text.splitlines() if l and not l.startswith("#")]
check(all(re.match(r'^[a-z_]+\{[^}]*\} [0-9.e+-]+$', l) for l in lines), "metrics lines parse")


def metric(name, **labels):
    lab = ",".join('%s="%s"' % kv for kv in labels.items())
    m = re.search(r"^%s\{%s\} ([0-9.e+-]+)$" % (re.escape(name), re.escape(lab)), text, re.M)
    return float(m.group(1)) if m else None


check((metric("mlc_requests_total", model="dyn", code="200") or 0) >= 2 * NCLI * NREQ,
      "metrics count the dyn requests: %s" % metric("mlc_requests_total", model="dyn", code="200"))
check((metric("mlc_requests_total", model="mlp", code="400") or 0) >= 20, "metrics count the 400s")
check(metric("mlc_requests_total", model="mlp", code="413") is not None, "metrics count the 413s")
check(metric("mlc_request_duration_seconds_count", model="dyn") == metric(
    "mlc_request_duration_seconds_bucket", model="dyn", le="+Inf"), "histogram count == +Inf bucket")
check(metric("mlc_queue_depth", model="dyn") == 0 and metric("mlc_model_ready", model="dyn") == 1, "gauges")
check((metric("mlc_inference_duration_seconds_count", model="dyn") or 0) > 0, "inference summary")
print("batched requests (dyn):", metric("mlc_batched_requests_total", model="dyn"))

# ---- reload: SIGHUP and the repository endpoint, under traffic --------------------------
swap = os.path.join(TMP, "swap.so")
subprocess.run(["cp", mlp, swap], check=True)
R = Server([swap, mlp], "--sessions", "2", "--threads", "1")
stop = threading.Event()
seen = {"old": 0, "new": 0, "bad": 0}


def hammer():
    c = R.conn()
    body, hd = infer_body([x_mlp], ["x"], ["FP32"], binary_in=True, params={"binary_data_output": True})
    while not stop.is_set():
        try:
            st, h, data = R.req("POST", "/v2/models/swap/infer", body, hd, conn=c)
            y = decode(st, h, data)[1]["y"] if st == 200 else None
        except Exception:  # noqa: BLE001
            y = None
            c = R.conn()
        if y is not None and same(y, ref_mlp):
            seen["old"] += 1
        elif y is not None and same(y, ref_mlp2):
            seen["new"] += 1
        else:
            seen["bad"] += 1


ths = [threading.Thread(target=hammer) for _ in range(4)]
for t in ths:
    t.start()
time.sleep(0.5)
subprocess.run(["cp", mlp2, swap + ".tmp"], check=True)
os.rename(swap + ".tmp", swap)
R.p.send_signal(signal.SIGHUP)
time.sleep(1.0)
old_after_hup = seen["old"]
time.sleep(0.5)
check(seen["old"] == old_after_hup and seen["new"] > 0, "SIGHUP swapped the model: %s" % seen)
# the load endpoint, back to the first weights
subprocess.run(["cp", mlp, swap + ".tmp"], check=True)
os.rename(swap + ".tmp", swap)
st, j = R.json("POST", "/v2/repository/models/swap/load")
check(st == 200 and j.get("ready") is True, "load endpoint: %s %s" % (st, j))
time.sleep(0.5)  # requests queued on the old instance before the swap finish there
n_new = seen["new"]
time.sleep(0.5)
check(seen["new"] == n_new, "load endpoint swapped back")
# a file that does not load: the old model keeps serving
with open(swap + ".tmp", "wb") as f:
    f.write(b"\x7fELF not really")
os.rename(swap + ".tmp", swap)
st, j = R.json("POST", "/v2/repository/models/swap/load")
check(st == 500 and "swap" in j.get("error", ""), "load of a broken file: %s %s" % (st, j))
n_old = seen["old"]
time.sleep(0.3)
check(seen["old"] > n_old, "the old model kept serving")
stop.set()
for t in ths:
    t.join()
check(seen["bad"] == 0, "no failed request across the reloads: %s" % seen)
# unload, then load again
subprocess.run(["cp", mlp, swap + ".tmp"], check=True)
os.rename(swap + ".tmp", swap)
st, j = R.json("POST", "/v2/repository/models/swap/unload")
check(st == 200 and j.get("ready") is False, "unload: %s %s" % (st, j))
st, j = R.json("GET", "/v2/models/swap/ready")
check(st == 400 and j.get("ready") is False, "unloaded model not ready: %s %s" % (st, j))
st, j = R.json("GET", "/v2/health/ready")
check(st == 400, "server not ready with a model unloaded: %s" % st)
body, hd = infer_body([x_mlp], ["x"], ["FP32"])
st, j = R.json("POST", "/v2/models/swap/infer", body, hd)
check(st == 503, "infer on an unloaded model: %s %s" % (st, j))
st, j = R.json("POST", "/v2/repository/models/swap/load")
st2, h, data = R.req("POST", "/v2/models/swap/infer", body, hd)
check(st == 200 and st2 == 200 and same(decode(st2, h, data)[1]["y"], ref_mlp), "load after unload: %s %s" % (st, st2))
check(R.stop() == 0, "reload server exits 0 on SIGTERM")

# ---- the queue: 503 when full --------------------------------------------------------------
body, hd = infer_body([x_slow], ["x"], ["FP32"], binary_in=True, params={"binary_data_output": True})
req = (b"POST /v2/models/slow/infer HTTP/1.1\r\nHost: t\r\nConnection: close\r\n"
       b"Inference-Header-Content-Length: %s\r\nContent-Length: %d\r\n\r\n"
       % (hd["Inference-Header-Content-Length"].encode(), len(body))) + body


def flood(srv, n, then=None):
    """n requests at once on n connections; |then| runs once they are sent.
    Returns the statuses, checking each 200's output."""
    socks = [socket.create_connection(("127.0.0.1", srv.port), timeout=60) for _ in range(n)]
    for s in socks:
        s.sendall(req)
    if then:
        then()
    codes = []
    for s in socks:
        got = b""
        while True:
            d = s.recv(1 << 20)
            if not d:
                break
            got += d
        s.close()
        m = re.match(rb"HTTP/1\.1 (\d+)", got)
        codes.append(int(m.group(1)) if m else None)
        if m and m.group(1) == b"200":
            head, data = got.split(b"\r\n\r\n", 1)
            hh = dict(l.split(": ", 1) for l in head.decode().split("\r\n")[1:])
            hh = {k.lower(): v for k, v in hh.items()}
            check(same(decode(200, hh, data)[1]["y"], ref_slow), "queued request answered correctly")
    return codes


Q = Server([slow], "--sessions", "1", "--threads", "1", "--max-queue", "2")
codes = flood(Q, 12)
check(codes.count(503) > 0 and codes.count(200) >= 2 and codes.count(200) + codes.count(503) == 12,
      "a full queue answers 503: %s" % codes)
check(Q.alive(), "queue server still up")
check(Q.stop() == 0, "queue server exits 0")

# ---- drain on SIGTERM -------------------------------------------------------------------------
Q2 = Server([slow], "--sessions", "1", "--threads", "1", "--max-queue", "64")
term = []


def sigterm():
    time.sleep(0.15)  # every connection accepted, most requests still queued
    term.append(time.time())
    Q2.p.send_signal(signal.SIGTERM)


codes = flood(Q2, 30, then=sigterm)
rc = Q2.p.wait(60)
waited = time.time() - term[0]
check(rc == 0, "drain: exit status %s" % rc)
check(codes == [200] * 30, "drain: every request in flight answered: %s" % codes)
check(waited > 0.05, "drain: the server waited for its queue (%.3f s after SIGTERM)" % waited)
try:
    socket.create_connection(("127.0.0.1", Q2.port), timeout=2).close()
    refused = False
except OSError:
    refused = True
check(refused, "after the drain, no more connections")

# ---- access log -------------------------------------------------------------------------------
check(S.stop() == 0, "main server exits 0 on SIGTERM")
recs = [json.loads(l) for l in open(S.log)]
check(len(recs) >= 2 * NCLI * NREQ + 40, "access log: one line per request (%d)" % len(recs))
check(all({"time", "remote", "method", "path", "status", "ms"} <= set(r) for r in recs), "access log fields")
check(any(r["status"] == 408 for r in recs) and any(r["status"] == 413 for r in recs)
      and any(r.get("id") == "req-mlp" for r in recs), "access log has the 408, the 413 and ids")
check(all("error" in r for r in recs if r["status"] >= 400), "access log: errors carry their message")

# ---- mlc-onnx serve is the same server ---------------------------------------------------------
O = Server([mlp], cmd=[CLI, "serve"])
body, hd = infer_body([x_mlp], ["x"], ["FP32"])
st, h, data = O.req("POST", "/v2/models/mlp/infer", body, hd)
check(st == 200 and same(decode(st, h, data)[1]["y"], ref_mlp), "mlc-onnx serve answers: %s" % st)
check(O.stop() == 0, "mlc-onnx serve exits 0 on SIGTERM")

print("test_serve: %d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
