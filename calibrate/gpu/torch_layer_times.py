#!/usr/bin/env python3
"""Times one transformer layer's F, B, I and W on a GPU with PyTorch, as ground truth for pipesim's cost model.

pipesim predicts a layer's times from a hardware profile (pipesim-gpu-calibrate) and the model's shapes; this
script measures the same layer as a framework runs it, so the prediction can be checked against a measurement
made on the same card. It is not needed to use pipesim; it needs PyTorch with CUDA.

The layer (pre-norm, bf16, no dropout, no bias): norm -> QKV -> causal attention (scaled_dot_product_attention,
flash backend; GQA when kv_heads < heads) -> output projection -> residual -> norm -> MLP (GeLU: h -> f -> h;
SwiGLU: gate and up h -> f, down f -> h) -> residual.

  F  forward with autograd recording (activations saved, as in training)
  B  backward for the input and every weight (autograd.grad over both)
  I  backward for the input only (autograd computes no weight gradient)
  W  backward for the weights only
  recompute=full: the layer under torch.utils.checkpoint (F saves only the input; B reruns F first)

Every time is the median of --repeats runs after --warmups, timed with CUDA events; inputs are random.
Usage: python3 torch_layer_times.py [-o layer_times.csv] [--repeats 20] [--quick]
"""
import argparse
import datetime
import socket
import statistics
import sys

import torch
import torch.nn.attention
import torch.nn.functional as functional
from torch.utils.checkpoint import checkpoint

# name, hidden, heads, kv_heads, ffn, mlp, norm, [(seq, micro_batch), ...], recompute
CONFIGS = [
    ("gpt-h2048", 2048, 16, 16, 8192, "gelu", "layernorm", [(2048, 1), (2048, 2), (2048, 4), (2048, 8)], "none"),
    ("gpt-h4096", 4096, 32, 32, 16384, "gelu", "layernorm", [(2048, 1), (2048, 2), (2048, 4)], "none"),
    ("llama3-8b", 4096, 32, 8, 14336, "swiglu", "rmsnorm", [(4096, 1), (4096, 2), (8192, 1)], "none"),
    ("llama3-8b", 4096, 32, 8, 14336, "swiglu", "rmsnorm", [(4096, 1)], "full"),
    ("llama3-70b", 8192, 64, 8, 28672, "swiglu", "rmsnorm", [(4096, 1), (8192, 1)], "none"),
]
QUICK_CONFIGS = [("gpt-h1024", 1024, 8, 8, 4096, "gelu", "layernorm", [(1024, 1)], "none")]


class Layer(torch.nn.Module):
    def __init__(self, hidden, heads, kv_heads, ffn, mlp, norm):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, hidden // heads
        self.mlp = mlp
        make_norm = torch.nn.LayerNorm if norm == "layernorm" else torch.nn.RMSNorm
        self.norm1, self.norm2 = make_norm(hidden), make_norm(hidden)
        self.qkv = torch.nn.Linear(hidden, (heads + 2 * kv_heads) * self.head_dim, bias=False)
        self.proj = torch.nn.Linear(hidden, hidden, bias=False)
        self.up = torch.nn.Linear(hidden, (2 if mlp == "swiglu" else 1) * ffn, bias=False)
        self.down = torch.nn.Linear(ffn, hidden, bias=False)
        self.native_gqa = False

    def attention_impl(self):
        """Uses the flash kernel's own GQA when this PyTorch has it for the flash backend, else repeat_kv."""
        if self.kv_heads == self.heads:
            return "flash"
        self.native_gqa = True
        try:
            x = torch.randn(1, 256, self.norm1.normalized_shape[0], device="cuda", dtype=torch.bfloat16)
            self.attention(x)
            return "flash, native GQA"
        except RuntimeError:
            self.native_gqa = False
            return "flash, GQA by repeat_kv"

    def attention(self, x):
        b, s, _ = x.shape
        q, k, v = self.qkv(x).split(
            [self.heads * self.head_dim, self.kv_heads * self.head_dim, self.kv_heads * self.head_dim], dim=-1)
        q = q.view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k = k.view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        v = v.view(b, s, self.kv_heads, self.head_dim).transpose(1, 2)
        if self.kv_heads != self.heads and not self.native_gqa:
            # The Llama reference code's repeat_kv: each key/value head serves heads / kv_heads query heads.
            k = k.repeat_interleave(self.heads // self.kv_heads, dim=1)
            v = v.repeat_interleave(self.heads // self.kv_heads, dim=1)
        with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.FLASH_ATTENTION):
            o = functional.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=self.native_gqa)
        return self.proj(o.transpose(1, 2).reshape(b, s, -1))

    def feed_forward(self, x):
        if self.mlp == "swiglu":
            gate, up = self.up(x).chunk(2, dim=-1)
            return self.down(functional.silu(gate) * up)
        return self.down(functional.gelu(self.up(x), approximate="tanh"))

    def forward(self, x):
        x = x + self.attention(self.norm1(x))
        return x + self.feed_forward(self.norm2(x))


def median_ms(body, warmups, repeats):
    for _ in range(warmups):
        body()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        body()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times), min(times), max(times)


def time_layer(layer, seq, micro_batch, recompute, warmups, repeats):
    hidden = layer.norm1.normalized_shape[0]
    x = torch.randn(micro_batch, seq, hidden, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    grad = torch.randn(micro_batch, seq, hidden, device="cuda", dtype=torch.bfloat16)
    params = list(layer.parameters())
    run = (lambda: checkpoint(layer, x, use_reentrant=False)) if recompute == "full" else (lambda: layer(x))
    f = median_ms(run, warmups, repeats)
    out = {"F": f}
    for kind, inputs in (("B", [x] + params), ("I", [x]), ("W", params)):
        if recompute == "full":
            # Each backward needs a fresh graph (checkpoint frees its recomputed activations): time forward +
            # backward and subtract the forward's median.
            def body(inputs=inputs):
                torch.autograd.grad(run(), inputs, grad)
            total = median_ms(body, warmups, repeats)
            out[kind] = tuple(t - f[0] for t in total)
        else:
            y = run()
            out[kind] = median_ms(lambda inputs=inputs: torch.autograd.grad(y, inputs, grad, retain_graph=True),
                                  warmups, repeats)
            del y
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-o", "--output", default="layer_times.csv")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--warmups", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="one small layer, for a first look")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("torch_layer_times.py: no CUDA GPU available", file=sys.stderr)
        return 2
    torch.manual_seed(0)
    props = torch.cuda.get_device_properties(0)
    header = [
        f"# pipesim layer times; {' '.join(sys.argv)}",
        f"# device: {props.name}, {props.multi_processor_count} SMs, {props.total_memory / 2**30:.1f} GiB",
        f"# torch {torch.__version__}, CUDA {torch.version.cuda}, cuDNN {torch.backends.cudnn.version()}",
        f"# host {socket.gethostname()}, date {datetime.datetime.now(datetime.timezone.utc).isoformat(timespec='seconds')}",
        f"# bf16, flash attention (causal), no dropout, no bias; medians of {args.repeats} runs after "
        f"{args.warmups} warm-ups, CUDA events; min and max beside each median",
    ]
    columns = ["config", "hidden", "heads", "kv_heads", "ffn", "mlp", "norm", "seq", "micro_batch", "recompute",
               "attention"]
    for kind in "FBIW":
        columns += [f"{kind}_ms", f"{kind}_min_ms", f"{kind}_max_ms"]
    rows = []
    for name, hidden, heads, kv_heads, ffn, mlp, norm, shapes, recompute in (QUICK_CONFIGS if args.quick else CONFIGS):
        layer = Layer(hidden, heads, kv_heads, ffn, mlp, norm).cuda().to(torch.bfloat16)
        attention = layer.attention_impl()
        for seq, micro_batch in shapes:
            times = time_layer(layer, seq, micro_batch, recompute, args.warmups, args.repeats)
            row = [name, hidden, heads, kv_heads, ffn, mlp, norm, seq, micro_batch, recompute, f'"{attention}"']
            for kind in "FBIW":
                row += [f"{t:.4f}" for t in times[kind]]
            rows.append(row)
            print(f"{name:12} s={seq:5} b={micro_batch} recompute={recompute:4} {attention:24} " +
                  "  ".join(f"{kind} {times[kind][0]:8.3f} ms" for kind in "FBIW"), flush=True)
        del layer
        torch.cuda.empty_cache()
    with open(args.output, "w") as out:
        out.write("\n".join(header) + "\n" + ",".join(columns) + "\n")
        for row in rows:
            out.write(",".join(str(v) for v in row) + "\n")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
