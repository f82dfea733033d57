#!/usr/bin/python3
"""Cross-checks pipesim's numerics against PyTorch (ctest: numerics_torch; optional).

Usage: numerics_torch_test.py PIPESIM WORK_DIR. Skipped (exit 77) when python3-torch is not installed: the setup
script never installs it. For each case, `pipesim execute --dump-init/--dump-batches/--dump-weights-at` writes
the initial weights, the microbatches and each stage's weights after a few optimizer steps; this script builds
the same model in PyTorch from the manifest alone (its conventions say what each unit computes), trains it on
the dumped microbatches with autograd's gradients and the manifest's update rule, and compares the weights after
every dumped step (relative to the tensor's largest value; float32 summation orders differ). The cases: the residual MLP on the teacher task under plain SGD and AdamW, and the tiny
character GPT (attention, GELU MLP, LayerNorm head) on the snippet under AdamW, each on 2 pipeline stages.
"""
import json
import os
import subprocess
import sys

try:
    import numpy as np
    import torch
except ImportError as missing:
    print(f"SKIP: {missing.name} is not installed (python3-torch is optional; the setup script does not install it)")
    sys.exit(77)

PIPESIM, WORK = (os.path.abspath(a) for a in sys.argv[1:3])
STEPS = 3
torch.set_default_dtype(torch.float32)
failures = []


def layer_norm(x, gamma, beta):
    mean = x.mean(dim=1, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=1, keepdim=True)
    return (x - mean) / torch.sqrt(var + 1e-5) * gamma + beta


def gelu(x):
    return 0.5 * x * (1.0 + torch.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))


def attention(qkv, heads, context):
    rows, three_d = qkv.shape
    d = three_d // 3
    hw = d // heads
    out = torch.zeros(rows, d)
    mask = torch.triu(torch.ones(context, context, dtype=torch.bool), diagonal=1)
    pieces = []
    for b in range(rows // context):
        block = qkv[b * context:(b + 1) * context]
        heads_out = []
        for h in range(heads):
            q = block[:, h * hw:(h + 1) * hw]
            k = block[:, d + h * hw:d + (h + 1) * hw]
            v = block[:, 2 * d + h * hw:2 * d + (h + 1) * hw]
            scores = (q @ k.T) / (hw ** 0.5)
            scores = scores.masked_fill(mask, float("-inf"))
            heads_out.append(torch.softmax(scores, dim=1) @ v)
        pieces.append(torch.cat(heads_out, dim=1))
    return torch.cat(pieces, dim=0) if pieces else out


def forward(manifest, params, inputs):
    model = manifest["model"]
    x = inputs
    for unit in manifest["units"]:
        p = params[unit["index"]]
        kind = unit["kind"]
        if kind == "linear":
            x = x @ p["weight"] + p["bias"]
        elif kind == "residual_mlp":
            x = x + gelu(layer_norm(x, p["ln.gamma"], p["ln.beta"]) @ p["w_in"] + p["b_in"]) @ p["w_out"] + p["b_out"]
        elif kind == "causal_self_attention":
            qkv = layer_norm(x, p["ln.gamma"], p["ln.beta"]) @ p["w_in"] + p["b_in"]
            x = x + attention(qkv, model["heads"], model["input_width"]) @ p["w_out"] + p["b_out"]
        elif kind == "token_position_embedding":
            ids = x.long()
            samples, context = ids.shape
            x = (p["token_table"][ids] + p["position_table"][torch.arange(context)]).reshape(samples * context, -1)
        elif kind == "layer_norm_head":
            x = layer_norm(x, p["ln.gamma"], p["ln.beta"]) @ p["weight"] + p["bias"]
        else:
            raise SystemExit(f"unit kind {kind} is not implemented by this cross-check")
    return x


def train_and_compare(name, args):
    out = os.path.join(WORK, name)
    init, batches = os.path.join(out, "init"), os.path.join(out, "batches")
    command = [PIPESIM, "execute", "scenarios/executor/validate-small.yaml", "--schedules", "1f1b-flush",
               "--clock", "scenario", "--set", f"pipeline.batches={STEPS}", "--set", "pipeline.microbatches=4",
               "--dump-init", init, "--dump-batches", batches] + args
    for step in range(1, STEPS + 1):
        command += ["--dump-weights-at", str(step)]
    subprocess.run(command, check=True, capture_output=True, text=True)
    manifest = json.load(open(os.path.join(init, "manifest.json")))
    training = manifest["training"]
    optimizer = training["optimizer"]
    params, roles = {}, {}
    for unit in manifest["units"]:
        params[unit["index"]] = {}
        for t in unit["tensors"]:
            params[unit["index"]][t["name"]] = torch.tensor(np.load(os.path.join(init, "init", t["file"])),
                                                            requires_grad=True)
            roles[(unit["index"], t["name"])] = t["role"]
    index = json.load(open(os.path.join(batches, "batches.json")))["microbatches"]
    m = training["microbatches_per_batch"]
    moments = {}
    worst = 0.0
    for step in range(1, STEPS + 1):
        total = {key: torch.zeros_like(value) for key, value in
                 (((u, n), t) for u, tensors in params.items() for n, t in tensors.items())}
        for entry in index:
            if entry["step"] != step - 1:
                continue
            inputs = torch.tensor(np.load(os.path.join(batches, entry["inputs"])))
            labels = torch.tensor(np.load(os.path.join(batches, entry["labels"]))).long()
            loss = torch.nn.functional.cross_entropy(forward(manifest, params, inputs), labels)
            grads = torch.autograd.grad(loss, [t for tensors in params.values() for t in tensors.values()])
            for key, g in zip(total, grads):
                total[key] = total[key] + g
        lr = training["learning_rate_by_step"][step - 1]
        with torch.no_grad():
            for (u, n), g_sum in total.items():
                w = params[u][n]
                g = g_sum / m
                decays = roles[(u, n)] != "vector" and optimizer["weight_decay"] != 0
                if optimizer["kind"] == "sgd":
                    direction = g.clone()
                elif optimizer["kind"] == "adamw":
                    b1, b2, eps = optimizer["beta1"], optimizer["beta2"], optimizer["epsilon"]
                    mom, var = moments.get((u, n), (torch.zeros_like(w), torch.zeros_like(w)))
                    mom = b1 * mom + (1 - b1) * g
                    var = b2 * var + (1 - b2) * g * g
                    moments[(u, n)] = (mom, var)
                    direction = (mom / (1 - b1 ** step)) / (torch.sqrt(var / (1 - b2 ** step)) + eps)
                else:
                    raise SystemExit(f"optimizer {optimizer['kind']} is not implemented by this cross-check")
                if decays:
                    direction = direction + optimizer["weight_decay"] * w
                w -= lr * direction
        for unit in manifest["units"]:
            for t in unit["tensors"]:
                theirs = np.load(os.path.join(init, f"weights-step-{step}", t["file"]))
                mine = params[unit["index"]][t["name"]].detach().numpy()
                difference = np.abs(mine - theirs)
                if unit["kind"] == "causal_self_attention" and t["name"] == "b_in":
                    # The key bias has no gradient in exact arithmetic (a query's softmax ignores a shift shared
                    # by its keys): both sides' gradients there are rounding noise, which AdamW scales up to
                    # steps of any size up to lr. Compared apart: each must stay within lr per step of its start.
                    d = manifest["model"]["width"]
                    start = np.load(os.path.join(init, "init", t["file"]))[d:2 * d]
                    bound = sum(training["learning_rate_by_step"][:step]) * 1.001
                    if np.abs(theirs[d:2 * d] - start).max() > bound:
                        failures.append(f"{name}: step {step}: the key bias moved more than the learning rates allow")
                    difference[d:2 * d] = 0
                scale = max(1e-3, float(np.abs(mine).max()))
                error = float(difference.max()) / scale
                worst = max(worst, error)
                if error > 2e-4:
                    failures.append(f"{name}: step {step}, unit {unit['index']} {t['name']}: max |difference| "
                                    f"{error:.2e} of the tensor's scale")
    print(f"{name}: {STEPS} steps, {sum(len(u['tensors']) for u in manifest['units'])} tensors, worst relative "
          f"difference {worst:.2e}")


os.makedirs(WORK, exist_ok=True)
train_and_compare("mlp-sgd", ["--lr", "0.1"])
train_and_compare("mlp-adamw", ["--optimizer", "adamw", "--lr", "0.01", "--weight-decay", "0.1"])
train_and_compare("gpt-adamw", ["--model", "gpt", "--data", "snippet", "--width", "16", "--blocks", "1",
                                "--samples", "2", "--optimizer", "adamw", "--lr", "0.01", "--weight-decay", "0.1"])
for failure in failures:
    print("FAIL:", failure)
sys.exit(1 if failures else 0)
