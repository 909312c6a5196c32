#!/usr/bin/env python3
"""PyTorch's peer of `recur bench rnn-gpu` and `recur bench devices`: the same shapes, on the same
GPU, in the same run, printed in the same two table layouts so that rows compare line by line.

Every timed call ends with the stream synchronized, so wall clock is the caller's truth, as in
recur's benches (tools/cli/bench/bench_timing.h): warm-up, then calls repeated until --min-seconds / 3 have
passed, the median of 3 such chunks. fp32 throughout, TF32 off for cuBLAS and cuDNN. All work
runs on one non-default stream, as recur's executors do. Before a shape is timed, its outputs
are checked against a float64 reference (relative norm <= 1e-4, where fp32 lands near 1e-6), so
a copy that a graph did not capture or a stale state fails the row (on stderr, exit status 1)
instead of timing the wrong thing; the other rows still run. Rows are printed as they finish.

Core table (`recur bench rnn-gpu`'s layout; samples = B x T; GFLOP/s count the step GEMM's
2 (I + H) 4H per sample, 3x that for forward + backward; roofline = torch-gemm of that shape):
  torch-gemm           (B, I+H) @ (I+H, 4H) with torch.mm; device time (CUDA events over a graph
                       of back-to-back calls, so Python launch cost does not count).
  torch-step-eager     nn.LSTMCell step of B slots as recur's cuda-step: host staging of x and
                       episode_start into pinned memory, their H2D copies, the reset mask, the
                       cell, D2H of h into pinned memory, stream sync, h copied out.
  torch-step-graph     the same with the device part (copies included) replayed as one CUDA graph,
                       as recur's cuda-step-graph (whose graph holds its memcpy nodes).
  torch-step-loop      T calls of torch-step-graph (eager on the CPU), as recur's cuda-step-loop.
  torch-seq-fwd        nn.LSTM (cuDNN) over (T, B, I) from a non-zero (h0, c0), training-mode
                       forward (as recur's cudnn-fwd); x and y stay on the device.
  torch-seq-fwdbwd     that forward and the backward of sum(y * R) for a fixed random R (passed as
                       dy, which is the same gradient): dx, dh0, dc0 and dW.
  copy-floor           pinned H2D of x (B, I) + D2H of h (B, H) + sync, nothing else.
  copy-floor-graph1    the same with a graph of one trivial kernel replayed between the copies.
  copy-floor-in-graph  one graph holding H2D x, one trivial kernel and D2H h; replay + sync: the
                       floor of a step designed as recur's graph step is.
  event-sync-floor     a graph of one trivial kernel and no copies, replay + sync.
Actor table (`recur bench devices`' layout; samples = B env steps):
  torch-actor-eager/-graph  one act() of B slots of bench devices' policy: obs 16, encoder
                       Linear(obs, 64) + tanh, LSTMCell(64, H), separate actor and critic towers
                       (--shared-core: one), linear heads, 4 actions sampled by Gumbel-max with
                       their log-probs, values. Included: host normalization of obs into one pinned
                       input block (obs + episode_start), one H2D, the network, one D2H of
                       (actions, log-probs, values), sync, outputs copied out. Device "torch-graph"
                       replays the device part as one CUDA graph (as recur's cuda actor).
Not measured: a mapped-memory floor (a kernel reading page-locked host memory directly): torch has
no API for it.

Where the rows differ from recur's by definition: recur's cudnn-* rows go through the host API
(H2D of x and the initial state, D2H of y; for the backward H2D dy and D2H dx, d(initial state)
and dW); the torch-seq rows keep x, y and the gradients on the device, as recur's cudnn-dev-*
rows do (where the build has them: only the plan and initial states come from the host there).
Neither table has a peer of recur's mapped (zero-copy) rows. recur's gemm row times a C++ launch
loop, torch-gemm a graph: compare us/call and GFLOP/s across the two, the roofline % only within
one table. --threads sets torch's host threads (CPU rows; the GPU rows are single-threaded).

PyTorch is not in tools/requirements.txt (CI does not need it). To run this:
    python3 -m venv /tmp/torchvenv && /tmp/torchvenv/bin/pip install torch   # CUDA wheels
    (CPU only: pip install torch --index-url https://download.pytorch.org/whl/cpu)
    /tmp/torchvenv/bin/python tools/bench/bench_torch_peer.py --min-seconds 0.05
    /tmp/torchvenv/bin/python tools/bench/bench_torch_peer.py --device cpu --batch 1,4 --hidden 8
"""
import argparse
import math
import sys
import time

CORE_MODES = ["torch-gemm", "torch-step-eager", "torch-step-graph", "copy-floor",
              "copy-floor-graph1", "copy-floor-in-graph", "event-sync-floor", "torch-seq-fwd",
              "torch-seq-fwdbwd", "torch-step-loop"]
# With episode starts inside the sequences (--start-rate): ResetSeqPeer's three ways.
RESET_MODES = [f"torch-seq-{way}-{p}" for way in ("pad", "pack", "loop")
               for p in ("fwd", "fwdbwd")]
CORE_MODES += RESET_MODES
ACTOR_MODES = ["torch-actor-eager", "torch-actor-graph"]
CPU_MODES = ["torch-gemm", "torch-step-eager", "torch-seq-fwd", "torch-seq-fwdbwd",
             "torch-step-loop", "torch-actor-eager"] + RESET_MODES
TOLERANCE = 1e-4  # relative norm against float64; see the docstring
CHECK_COLUMNS = 8  # batch columns of a sequence checked against the (slow) float64 loop


def int_list(text):
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got '{text}'")
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"expected positive integers, got '{text}'")
    return values


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    # Defaults are recur bench rnn-gpu's (tools/cli/bench/bench_rnn_gpu.h) and bench devices' (actor rows).
    p.add_argument("--batch", type=int_list, default=[1, 16, 64, 256, 1024], help="B (slots)")
    p.add_argument("--hidden", type=int_list, default=[64, 128, 256], help="H, core table")
    p.add_argument("--input", type=int, default=8, help="I, input width of the core table")
    p.add_argument("--seq-len", type=int_list, default=[32, 128], help="T of the sequence rows")
    p.add_argument("--actor-hidden", type=int_list, default=[64, 256], help="H, actor table")
    p.add_argument("--obs-dim", type=int, default=16, help="observation width, actor table")
    p.add_argument("--shared-core", action="store_true", help="actor: one tower for both heads")
    p.add_argument("--min-seconds", type=float, default=0.2, help="time per measurement")
    p.add_argument("--modes", default="", help="comma-separated subset (default: all that the "
                   "device supports): " + ",".join(CORE_MODES + ACTOR_MODES))
    p.add_argument("--device", choices=["cuda", "cpu"], default="cuda",
                   help="cpu: no graphs, no pinned memory (the smoke test)")
    p.add_argument("--threads", type=int, default=0,
                   help="torch.set_num_threads (default: torch's choice; host-side work only)")
    p.add_argument("--start-rate", type=float, default=0.0,
                   help="fraction of the sequence rows' timesteps that start an episode (recur "
                   "bench rnn's --start-rate; 0.03 is TorchRL's RNN benchmark's); above 0 the "
                   "default modes add the reset-correct " + ",".join(RESET_MODES) + " rows")
    p.add_argument("--csv", action="store_true", help="CSV instead of tables")
    args = p.parse_args(argv)
    if not 0 <= args.start_rate <= 1:
        p.error(f"--start-rate must be within [0, 1], got {args.start_rate:g}")
    if args.input < 1 or args.obs_dim < 1 or args.min_seconds <= 0 or args.threads < 0:
        p.error("--input and --obs-dim must be >= 1, --min-seconds > 0 and --threads >= 0")
    allowed = CPU_MODES if args.device == "cpu" else CORE_MODES + ACTOR_MODES
    modes = [m.strip() for m in args.modes.split(",") if m.strip()] or [
        m for m in allowed if args.start_rate > 0 or m not in RESET_MODES]
    for m in modes:
        if m not in allowed:
            p.error(f"mode '{m}' is not available on --device {args.device}; "
                    f"choose from {','.join(allowed)}")
    args.modes = modes
    return args


def time_per_call(min_seconds, fn, warmup=3):
    """Seconds per call: warm-up calls, then 3 chunks of min_seconds / 3, the median chunk."""
    for _ in range(warmup):
        fn()
    chunks = []
    for _ in range(3):
        calls, t0 = 0, time.perf_counter()
        while True:
            fn()
            calls += 1
            elapsed = time.perf_counter() - t0
            if elapsed >= min_seconds / 3:
                break
        chunks.append(elapsed / calls)
    return sorted(chunks)[1]


class Context:
    """The device, the bench stream and the host/device tensor helpers of one run."""

    def __init__(self, torch, device):
        self.torch = torch
        self.cuda = device == "cuda"
        self.dev = torch.device(device)
        self.gen = torch.Generator().manual_seed(1)  # host-side data, reproducible
        if self.cuda:
            # A stream of our own (non-blocking, as recur's) instead of the legacy default one.
            self.stream = torch.cuda.Stream()
            torch.cuda.set_stream(self.stream)

    def sync(self):
        if self.cuda:
            self.stream.synchronize()

    def uniform(self, *shape, device=None):
        """U(-1, 1), never zeros, drawn on the host (same values on either device)."""
        t = self.torch.rand(*shape, generator=self.gen) * 2 - 1
        return t.to(device) if device is not None else t

    def host(self, *shape, dtype=None):
        """Staging memory: pinned on CUDA (so copies are true async DMA and capturable)."""
        dtype = dtype or self.torch.float32
        return self.torch.zeros(*shape, dtype=dtype, pin_memory=self.cuda)

    def device_twin(self, host):
        """The device buffer a host staging buffer is copied to; on the CPU the buffer itself."""
        return self.torch.zeros_like(host, device=self.dev) if self.cuda else host

    def copy(self, dst, src):
        if dst is not src:
            dst.copy_(src, non_blocking=True)

    def capture(self, body):
        """body captured as a CUDA graph, after warm-up runs on the bench stream so that lazy
        initialisation (cuBLAS handles and workspaces, kernel modules) happens outside capture."""
        torch = self.torch
        for _ in range(3):
            body()
        self.sync()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            body()
        self.sync()
        return graph


def rel_error(torch, got, want):
    got, want = got.detach().double().cpu(), want.detach().double().cpu()
    return (torch.linalg.vector_norm(got - want) /
            max(torch.linalg.vector_norm(want).item(), 1e-30)).item()


def check(torch, what, got, want):
    err = rel_error(torch, got, want)
    if not err <= TOLERANCE:
        raise RuntimeError(f"{what}: relative error {err:.3g} > {TOLERANCE:g} against float64")


def ref_cell(torch, cell, x, h, c):
    """PyTorch's LSTM cell (gates i, f, g, o) written out in float64: the check's reference."""
    w_ih, w_hh = cell.weight_ih.double().cpu(), cell.weight_hh.double().cpu()
    b = cell.bias_ih.double().cpu() + cell.bias_hh.double().cpu()
    i, f, g, o = (x.double() @ w_ih.T + h.double() @ w_hh.T + b).chunk(4, dim=1)
    c = torch.sigmoid(f) * c.double() + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(c), c


# ---------------------------------------------------------------------------------------------
# Core table


def gemm_seconds(ctx, B, K, C, min_seconds):
    """Device seconds of (B, K) @ (K, C). On CUDA a graph of back-to-back torch.mm calls is timed
    with events: a Python loop of launches would measure the launch rate at small shapes."""
    torch = ctx.torch
    a, w = ctx.uniform(B, K, device=ctx.dev), ctx.uniform(K, C, device=ctx.dev)
    out = torch.empty(B, C, device=ctx.dev)
    if not ctx.cuda:
        return time_per_call(min_seconds, lambda: torch.mm(a, w, out=out))
    inner = 32
    graph = ctx.capture(lambda: [torch.mm(a, w, out=out) for _ in range(inner)])
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def replays(n):
        start.record()
        for _ in range(n):
            graph.replay()
        stop.record()
        stop.synchronize()
        return start.elapsed_time(stop) / 1e3 / (n * inner)

    per_call = replays(4)
    n = max(4, math.ceil(min_seconds / 3 / (per_call * inner)))
    return sorted(replays(n) for _ in range(3))[1]


class StepPeer:
    """recur's step executor contract in PyTorch: step(x (B, I), episode_start (B)) -> h (B, H),
    the recurrent state (h, c) kept on the device between calls."""

    def __init__(self, ctx, B, I, H, graph):
        torch = ctx.torch
        self.ctx = ctx
        self.cell = torch.nn.LSTMCell(I, H).to(ctx.dev).requires_grad_(False)
        self.starts_src = torch.zeros(B, 1, dtype=torch.bool)  # (B, 1) no resets while timing
        self.h_dst = torch.empty(B, H)                         # the caller's pageable output
        self.x_pin, self.s_pin = ctx.host(B, I), ctx.host(B, 1, dtype=torch.bool)
        self.h_pin = ctx.host(B, H)
        self.x_dev, self.s_dev = ctx.device_twin(self.x_pin), ctx.device_twin(self.s_pin)
        self.hc = ctx.uniform(2, B, H, device=ctx.dev)  # (2, B, H) state: h, c; non-zero start
        with torch.no_grad():
            self.graph = ctx.capture(self.body) if graph else None

    def body(self):
        ctx, torch = self.ctx, self.ctx.torch
        ctx.copy(self.x_dev, self.x_pin)
        ctx.copy(self.s_dev, self.s_pin)
        self.hc.masked_fill_(self.s_dev, 0.0)  # episode starts begin from a zero state
        h, c = self.cell(self.x_dev, (self.hc[0], self.hc[1]))
        torch.stack((h, c), out=self.hc)
        self.h_pin.copy_(h, non_blocking=True)

    def step(self, x_src, starts_src=None):
        self.x_pin.copy_(x_src)
        self.s_pin.copy_(self.starts_src if starts_src is None else starts_src)
        if self.graph is not None:
            self.graph.replay()
        else:
            with self.ctx.torch.no_grad():
                self.body()
        self.ctx.sync()
        self.h_dst.copy_(self.h_pin)
        return self.h_dst

    def check(self):
        """Two steps (the second resetting half the slots) against the float64 cell."""
        torch, ctx = self.ctx.torch, self.ctx
        B = self.hc.shape[1]
        hc0 = self.hc.detach().cpu().double()
        xs = [ctx.uniform(*self.x_pin.shape) for _ in range(2)]
        starts = torch.arange(B).remainder(2).bool().unsqueeze(1)
        h, c = hc0[0], hc0[1]
        for t, s in enumerate([self.starts_src, starts]):
            h, c = ref_cell(torch, self.cell, xs[t], h.masked_fill(s, 0), c.masked_fill(s, 0))
            check(torch, f"step {t} h (copied out)", self.step(xs[t], s), h)
        check(torch, "state c on the device", self.hc[1], c)


def floor_peers(ctx, B, I, H):
    """The copy and launch floors as {mode: (callable, check)}; each check verifies that the copies
    of the mode really moved data (a graph that dropped its memcpy nodes would fail it)."""
    torch = ctx.torch
    x_pin, h_pin = ctx.host(B, I), ctx.host(B, H)
    x_dev, h_dev = ctx.device_twin(x_pin), ctx.uniform(B, H, device=ctx.dev)
    one = torch.zeros(1, device=ctx.dev)
    kernel_graph = ctx.capture(lambda: one.add_(1.0))

    def copies():
        x_dev.copy_(x_pin, non_blocking=True)
        h_pin.copy_(h_dev, non_blocking=True)

    def in_graph():
        x_dev.copy_(x_pin, non_blocking=True)
        one.add_(1.0)
        h_pin.copy_(h_dev, non_blocking=True)

    full_graph = ctx.capture(in_graph)

    def copy_floor():
        copies()
        ctx.sync()

    def copy_floor_graph1():
        x_dev.copy_(x_pin, non_blocking=True)
        kernel_graph.replay()
        h_pin.copy_(h_dev, non_blocking=True)
        ctx.sync()

    def copy_floor_in_graph():
        full_graph.replay()
        ctx.sync()

    def event_sync_floor():
        kernel_graph.replay()
        ctx.sync()

    def moved(call):
        def check_copies():
            x_pin.copy_(ctx.uniform(B, I))
            h_dev.copy_(ctx.uniform(B, H, device=ctx.dev))
            call()
            check(torch, "x after H2D", x_dev, x_pin)
            check(torch, "h after D2H", h_pin, h_dev)
        return check_copies

    def launched():
        before = one.item()
        event_sync_floor()
        if one.item() != before + 1:
            raise RuntimeError("the 1-kernel graph did not run")

    return {"copy-floor": (copy_floor, moved(copy_floor)),
            "copy-floor-graph1": (copy_floor_graph1, moved(copy_floor_graph1)),
            "copy-floor-in-graph": (copy_floor_in_graph, moved(copy_floor_in_graph)),
            "event-sync-floor": (event_sync_floor, launched)}


class SeqPeer:
    """nn.LSTM over (T, B, I) from (h0, c0), everything on the device, grads of x, h0, c0, W."""

    def __init__(self, ctx, T, B, I, H):
        torch = ctx.torch
        self.ctx = ctx
        self.lstm = torch.nn.LSTM(I, H).to(ctx.dev)  # .to() flattens cuDNN's weight buffer
        self.x = ctx.uniform(T, B, I, device=ctx.dev).requires_grad_()  # (T, B, I)
        self.h0 = ctx.uniform(1, B, H, device=ctx.dev).requires_grad_()  # (1, B, H)
        self.c0 = ctx.uniform(1, B, H, device=ctx.dev).requires_grad_()
        self.dy = ctx.uniform(T, B, H, device=ctx.dev)  # R: d sum(y * R) / dy
        self.inputs = [self.x, self.h0, self.c0, *self.lstm.parameters()]

    keep = None  # ResetSeqPeer: (T, B, 1) 0 at the starts, where the state is zeroed
    label = ""   # ResetSeqPeer: its way, in the check's messages

    def run(self):
        return self.lstm(self.x, (self.h0, self.c0))[0]

    def forward(self):
        # Grad enabled: cuDNN's training-mode forward (reserve space kept), as recur's cudnn-fwd.
        y = self.run()
        self.ctx.sync()
        return y

    def forward_backward(self):
        y = self.run()
        grads = self.ctx.torch.autograd.grad(y, self.inputs, grad_outputs=self.dy)
        self.ctx.sync()
        return y, grads

    def check(self):
        """y, dx, dh0, dc0 of the first CHECK_COLUMNS batch columns (columns are independent, so a
        slice is exact) against a float64 loop of the written-out cell, differentiated by autograd;
        with starts (keep), the loop zeroes the state before a start's step.
        """
        torch = self.ctx.torch
        y, grads = self.forward_backward()
        n = min(CHECK_COLUMNS, self.x.shape[1])
        x = self.x[:, :n].detach().cpu().double().requires_grad_()
        h0 = self.h0[0, :n].detach().cpu().double().requires_grad_()
        c0 = self.c0[0, :n].detach().cpu().double().requires_grad_()
        keep = None if self.keep is None else self.keep[:, :n].cpu().double()
        cell = torch.nn.LSTMCell(x.shape[2], h0.shape[1])
        with torch.no_grad():
            for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                getattr(cell, name).copy_(getattr(self.lstm, name + "_l0"))
        h, c, ys = h0, c0, []
        for t in range(x.shape[0]):
            if keep is not None:
                h, c = h * keep[t], c * keep[t]
            h, c = ref_cell(torch, cell, x[t], h, c)
            ys.append(h)
        y_ref = torch.stack(ys)
        dx, dh0, dc0 = torch.autograd.grad(y_ref, [x, h0, c0],
                                           grad_outputs=self.dy[:, :n].cpu().double())
        check(torch, self.label + "y", y[:, :n], y_ref)
        check(torch, self.label + "dx", grads[0][:, :n], dx)
        check(torch, self.label + "dh0", grads[1][0, :n], dh0)
        check(torch, self.label + "dc0", grads[2][0, :n], dc0)


class ResetSeqPeer(SeqPeer):
    """nn.LSTM over (T, B, I) with episode starts inside the sequence (starts (T, B) bool: the
    state is zeroed before a start's step, as recur's executors do), in the three ways PyTorch
    users write it, since nn.LSTM (and cuDNN under it) cannot reset mid-sequence:
      pad   split each column at its starts into segments, pad them to the longest, one nn.LSTM
            call over (L_max, segments, I) from each segment's initial state, outputs gathered
            back to (T, B, H): sb3-contrib's RecurrentPPO. The index work is redone every call
            from the starts, as the libraries do per batch.
      pack  the same segments through pack_padded_sequence / pad_packed_sequence, so the padding
            is not computed: TorchRL's "pad" backend (the round trip its triton backend avoids).
      loop  nn.LSTM one timestep at a time, the state multiplied by (1 - start) between steps:
            CleanRL's ppo_atari_lstm (get_states).
    """

    def __init__(self, ctx, T, B, I, H, starts, way):
        super().__init__(ctx, T, B, I, H)
        torch = ctx.torch
        self.way, self.label = way, f"{way}: "
        self.starts = starts.to(ctx.dev)                                  # (T, B) bool
        self.keep = (~self.starts).to(torch.float32).unsqueeze(-1)       # (T, B, 1)
        self.run = self.looped if way == "loop" else self.padded

    def padded(self):
        torch, (T, B, I), H = self.ctx.torch, self.x.shape, self.h0.shape[2]
        # Column-major positions p = b T + t; a segment begins at t = 0 and at every start.
        begins = self.starts.t().contiguous()
        begins[:, 0] = True
        begins = begins.reshape(-1)
        seg = torch.cumsum(begins.to(torch.int64), 0) - 1                 # segment of each p
        first = torch.nonzero(begins).squeeze(1)                          # p of each segment's t 0
        pos = torch.arange(B * T, device=self.x.device) - first[seg]      # t within the segment
        n_seg = first.numel()
        L = int(pos.max().item()) + 1                                     # a host read, as theirs
        xs = torch.zeros(L, n_seg, I, device=self.x.device, dtype=self.x.dtype)
        xs = xs.index_put((pos, seg), self.x.transpose(0, 1).reshape(B * T, I))
        # Initial states: a column's first segment starts from (h0, c0) unless t 0 is a start.
        cols = seg[torch.arange(B, device=self.x.device) * T]             # first segment per b
        keep0 = (~self.starts[0]).to(self.x.dtype).view(1, B, 1)
        h_init = torch.zeros(1, n_seg, H, device=self.x.device).index_add(1, cols, self.h0 * keep0)
        c_init = torch.zeros(1, n_seg, H, device=self.x.device).index_add(1, cols, self.c0 * keep0)
        if self.way == "pack":
            rnn = torch.nn.utils.rnn
            lengths = torch.bincount(seg, minlength=n_seg).cpu()
            packed = rnn.pack_padded_sequence(xs, lengths, enforce_sorted=False)
            y_packed, _ = self.lstm(packed, (h_init, c_init))  # permutes the states to match
            y_pad, _ = rnn.pad_packed_sequence(y_packed, total_length=L)
        else:
            y_pad, _ = self.lstm(xs, (h_init, c_init))
        return y_pad[pos, seg].reshape(B, T, H).transpose(0, 1)

    def looped(self):
        h, c, ys = self.h0, self.c0, []
        for t in range(self.x.shape[0]):
            h, c = h * self.keep[t], c * self.keep[t]
            y, (h, c) = self.lstm(self.x[t:t + 1], (h, c))
            ys.append(y)
        return self.ctx.torch.cat(ys)


# ---------------------------------------------------------------------------------------------
# Actor table


class ActorPeer:
    """bench devices' policy acting for B slots (see the docstring for what one act() includes)."""

    def __init__(self, ctx, B, obs_dim, H, shared_core, graph, actions=4, encoder=64):
        torch, nn = ctx.torch, ctx.torch.nn
        self.ctx, self.obs_dim, self.actions = ctx, obs_dim, actions
        towers = 1 if shared_core else 2
        self.encoders = [nn.Linear(obs_dim, encoder).to(ctx.dev) for _ in range(towers)]
        self.cells = [nn.LSTMCell(encoder, H).to(ctx.dev) for _ in range(towers)]
        self.actor_head = nn.Linear(H, actions).to(ctx.dev)
        self.critic_head = nn.Linear(H, 1).to(ctx.dev)
        for m in self.encoders + self.cells + [self.actor_head, self.critic_head]:
            m.requires_grad_(False)
        self.hc = [ctx.uniform(2, B, H, device=ctx.dev) for _ in range(towers)]  # (2, B, H) each
        # The host normalizer's statistics (recur's: clip((x - mean) / std, -10, 10)).
        self.mean, self.inv_std = ctx.uniform(obs_dim) * 0.1, 1 / (1 + ctx.uniform(obs_dim).abs())
        self.shift = -self.mean * self.inv_std
        self.obs_src = ctx.uniform(B, obs_dim)  # the caller's pageable observations
        self.starts_src = torch.zeros(B)
        self.out_dst = torch.empty(B, 3)        # actions, log-probs, values
        self.in_pin = ctx.host(B, obs_dim + 1)  # (B, obs + 1): normalized obs | episode_start
        self.out_pin = ctx.host(B, 3)
        self.in_dev, self.out_dev = ctx.device_twin(self.in_pin), ctx.device_twin(self.out_pin)
        with torch.no_grad():
            self.graph = ctx.capture(self.body) if graph else None

    def tower(self, k, obs, keep):
        torch = self.ctx.torch
        self.hc[k].mul_(keep)  # episode starts begin from a zero state
        features = torch.tanh(self.encoders[k](obs))
        h, c = self.cells[k](features, (self.hc[k][0], self.hc[k][1]))
        torch.stack((h, c), out=self.hc[k])
        return h

    def body(self):
        ctx, torch = self.ctx, self.ctx.torch
        ctx.copy(self.in_dev, self.in_pin)
        obs, keep = self.in_dev[:, :self.obs_dim], 1 - self.in_dev[:, self.obs_dim:]
        h = self.tower(0, obs, keep)
        logits = self.actor_head(h)  # (B, A)
        # Gumbel-max: argmax(logits + G), G = -log(-log(U)), draws a categorical sample with
        # torch.rand only, which CUDA graphs replay with fresh numbers (torch.multinomial's
        # graph safety is version-dependent). U is kept off 0 so that G stays finite.
        u = torch.rand(logits.shape, device=ctx.dev).clamp_(min=1e-20)
        action = torch.argmax(logits - torch.log(-torch.log(u)), dim=1, keepdim=True)  # (B, 1)
        log_prob = torch.log_softmax(logits, dim=1).gather(1, action)
        value = self.critic_head(h if len(self.hc) == 1 else self.tower(1, obs, keep))
        torch.cat((action.float(), log_prob, value), dim=1, out=self.out_dev)
        ctx.copy(self.out_pin, self.out_dev)

    def act(self, obs_src=None, starts_src=None):
        torch = self.ctx.torch
        obs_src = self.obs_src if obs_src is None else obs_src
        nobs = self.in_pin[:, :self.obs_dim]
        torch.addcmul(self.shift, obs_src, self.inv_std, out=nobs).clamp_(-10.0, 10.0)
        self.in_pin[:, self.obs_dim].copy_(self.starts_src if starts_src is None else starts_src)
        if self.graph is not None:
            self.graph.replay()
        else:
            with torch.no_grad():
                self.body()
        self.ctx.sync()
        self.out_dst.copy_(self.out_pin)
        return self.out_dst

    def check(self):
        """One act (half the slots resetting) against float64: the values, and the log-probs of
        the sampled actions (which must be integers in range); sampling itself is not checked."""
        torch, ctx = self.ctx.torch, self.ctx
        B = self.obs_src.shape[0]
        obs = ctx.uniform(B, self.obs_dim) * 3
        starts = torch.arange(B).remainder(2).float()
        hcs = [hc.detach().cpu().double() for hc in self.hc]
        out = self.act(obs, starts).clone()
        nobs = ((obs.double() - self.mean.double()) * self.inv_std.double()).clamp(-10, 10)
        keep = (1 - starts.double()).unsqueeze(1)
        hs = []
        for k, hc in enumerate(hcs):
            enc = self.encoders[k]
            f = torch.tanh(nobs @ enc.weight.double().cpu().T + enc.bias.double().cpu())
            hs.append(ref_cell(torch, self.cells[k], f, hc[0] * keep, hc[1] * keep)[0])

        def linear(m, x):
            return x @ m.weight.double().cpu().T + m.bias.double().cpu()

        action = out[:, 0].long()
        if not ((out[:, 0] == action.float()).all() and action.min() >= 0
                and action.max() < self.actions):
            raise RuntimeError(f"actions are not integers in [0, {self.actions})")
        log_softmax = torch.log_softmax(linear(self.actor_head, hs[0]), dim=1)
        check(torch, "log-probs", out[:, 1], log_softmax.gather(1, action.unsqueeze(1))[:, 0])
        check(torch, "values", out[:, 2], linear(self.critic_head, hs[-1])[:, 0])


# ---------------------------------------------------------------------------------------------
# Output


def csv_field(text):
    """A CSV field as RFC 4180 (and recur's --csv) writes it: quoted when it holds a comma, a quote
    or a line break, inner quotes doubled."""
    if not any(c in text for c in ',"\n'):
        return text
    return '"' + text.replace('"', '""') + '"'


class Printer:
    def __init__(self, csv):
        self.csv = csv
        self.table = None

    def start(self, table, title):
        if self.table is not None:
            print()
        self.table = table
        if self.csv:
            print("mode,batch,hidden,seq_len,us_per_call,samples_per_s,gflops,roofline_fraction,"
                  "note" if table == "core" else
                  "role,device,batch,hidden,seq_len,us_per_call,samples_per_s")
            return
        print(title)
        if table == "core":
            print(f"{'mode':<26} {'B':>5} {'H':>5} {'T':>5} {'us/call':>12} {'samples/s':>14} "
                  f"{'GFLOP/s':>9} {'roofline':>9}  note")
        else:
            print(f"{'role':<8} {'device':<11} {'B':>6} {'H':>5} {'T':>5} {'us/call':>12} "
                  f"{'samples/s':>14}")

    def core(self, mode, B, H, T, seconds, flops, roof, note):
        samples = B * T
        gflops = flops * samples / seconds / 1e9
        fraction = gflops / roof if roof > 0 else 0.0
        if self.csv:
            print(f"{mode},{B},{H},{T},{seconds * 1e6:.3f},{samples / seconds:.0f},{gflops:.3f},"
                  f"{fraction:.4f},{csv_field(note)}", flush=True)
        else:
            print(f"{mode:<26} {B:>5} {H:>5} {T:>5} {seconds * 1e6:>12.2f} "
                  f"{samples / seconds:>14.0f} {gflops:>9.2f} {100 * fraction:>8.1f}%  {note}",
                  flush=True)

    def actor(self, device, B, H, seconds):
        if self.csv:
            print(f"actor,{device},{B},{H},1,{seconds * 1e6:.3f},{B / seconds:.0f}", flush=True)
        else:
            print(f"{'actor':<8} {device:<11} {B:>6} {H:>5} {1:>5} {seconds * 1e6:>12.1f} "
                  f"{B / seconds:>14.0f}", flush=True)


def attempter(failed):
    """attempt(what, B, H, T, fn): fn(), or None after reporting its error on stderr and noting
    it in `failed`: one broken row must not cost the GPU session the others."""
    def attempt(what, B, H, T, fn):
        try:
            return fn()
        except Exception as e:
            failed.append(what)
            first = str(e).strip().splitlines()[0] if str(e).strip() else ""
            print(f"bench_torch_peer: {what} B={B} H={H} T={T} failed: {type(e).__name__}: "
                  f"{first}", file=sys.stderr, flush=True)
            return None
    return attempt


def run_core(ctx, args, out, failed):
    modes, I, cpu, attempt = set(args.modes), args.input, not ctx.cuda, attempter(failed)
    floors = [m for m in CORE_MODES if m in modes and "floor" in m]
    floor_notes = {"copy-floor": "pinned H2D x + D2H h + sync",
                   "copy-floor-graph1": "H2D x, 1-kernel graph, D2H h, sync",
                   "copy-floor-in-graph": "1 graph: H2D x, 1 kernel, D2H h; sync",
                   "event-sync-floor": "1-kernel graph + sync, no copies"}

    for H in args.hidden:
        flops = 2.0 * (I + H) * 4 * H  # per sample: the step GEMM
        for B in args.batch:
            gemm = attempt("torch-gemm", B, H, 1,
                           lambda: gemm_seconds(ctx, B, I + H, 4 * H, args.min_seconds))
            roof = 2.0 * B * (I + H) * 4 * H / gemm / 1e9 if gemm else 0.0
            if gemm and "torch-gemm" in modes:
                out.core("torch-gemm", B, H, 1, gemm, flops, roof,
                         "torch.mm, host" if cpu else "torch.mm, device")

            # Steps; the loop rows reuse the graph step (the eager one on the CPU).
            x_src, loop_peer = ctx.uniform(B, I), None
            for graph in (False, True) if ctx.cuda else (False,):
                mode = "torch-step-graph" if graph else "torch-step-eager"
                feeds_loop = graph == ctx.cuda and "torch-step-loop" in modes
                if mode not in modes and not feeds_loop:
                    continue

                def step_row():
                    peer = StepPeer(ctx, B, I, H, graph)
                    peer.check()
                    if mode in modes:
                        s = time_per_call(args.min_seconds, lambda: peer.step(x_src))
                        out.core(mode, B, H, 1, s, flops, roof,
                                 "host" if cpu else "incl. H2D obs + D2H h")
                    return peer
                peer = attempt(mode, B, H, 1, step_row)
                loop_peer = peer if feeds_loop else loop_peer

            peers = attempt("floors", B, H, 1, lambda: floor_peers(ctx, B, I, H)) if floors else {}
            for mode in floors if peers else ():
                def floor_row():
                    call, check_copies = peers[mode]
                    check_copies()
                    out.core(mode, B, H, 1, time_per_call(args.min_seconds, call), 0, 0,
                             floor_notes[mode])
                attempt(mode, B, H, 1, floor_row)
            peers = None

            for T in args.seq_len:
                if "torch-seq-fwd" in modes or "torch-seq-fwdbwd" in modes:
                    def seq_rows():
                        seq = SeqPeer(ctx, T, B, I, H)
                        seq.check()
                        where = "native CPU" if cpu else "cuDNN"
                        resident = "" if cpu else ", x/y on device"
                        if args.start_rate > 0:
                            resident += ", starts ignored"
                        if "torch-seq-fwd" in modes:
                            out.core("torch-seq-fwd", B, H, T,
                                     time_per_call(args.min_seconds, seq.forward), flops, roof,
                                     f"nn.LSTM {where}, train fwd{resident}")
                        if "torch-seq-fwdbwd" in modes:
                            out.core("torch-seq-fwdbwd", B, H, T,
                                     time_per_call(args.min_seconds, seq.forward_backward),
                                     3 * flops, roof, f"nn.LSTM {where}, dx dh0 dc0 dW{resident}")
                    attempt("torch-seq", B, H, T, seq_rows)
                # Starts of their own generator: the other inputs stay those of rate 0.
                starts = ctx.torch.rand(T, B, generator=ctx.torch.Generator().manual_seed(2))
                starts = starts < args.start_rate
                for way in ("pad", "pack", "loop"):
                    fwd, both = f"torch-seq-{way}-fwd", f"torch-seq-{way}-fwdbwd"
                    if fwd not in modes and both not in modes:
                        continue

                    def reset_rows():
                        seq = ResetSeqPeer(ctx, T, B, I, H, starts, way)
                        seq.check()
                        how = {"pad": "split at starts + pad, 1 nn.LSTM call",
                               "pack": "split at starts, packed, 1 nn.LSTM call",
                               "loop": "T nn.LSTM calls, state * (1 - start)"}[way]
                        note = f"{how}, {int(starts.sum())} starts"
                        if fwd in modes:
                            out.core(fwd, B, H, T, time_per_call(args.min_seconds, seq.forward),
                                     flops, roof, note)
                        if both in modes:
                            out.core(both, B, H, T,
                                     time_per_call(args.min_seconds, seq.forward_backward),
                                     3 * flops, roof, note + ", dx dh0 dc0 dW")
                    attempt(f"torch-seq-{way}", B, H, T, reset_rows)
                if loop_peer is not None:
                    xs = ctx.uniform(T, B, I)

                    def loop_row():
                        def loop():
                            for t in range(T):
                                loop_peer.step(xs[t])
                        out.core("torch-step-loop", B, H, T, time_per_call(args.min_seconds, loop),
                                 flops, roof, "T eager steps" if cpu else "T graph replays")
                    attempt("torch-step-loop", B, H, T, loop_row)
            peer = loop_peer = None
            if ctx.cuda:
                ctx.torch.cuda.empty_cache()  # this shape's graphs are gone: free their pools


def run_actor(ctx, args, out, failed):
    attempt = attempter(failed)
    for H in args.actor_hidden:
        for B in args.batch:
            for mode in ACTOR_MODES:
                if mode not in args.modes:
                    continue

                def actor_row():
                    graph = mode == "torch-actor-graph"
                    peer = ActorPeer(ctx, B, args.obs_dim, H, args.shared_core, graph)
                    peer.check()
                    out.actor("torch-graph" if graph else "torch-eager", B, H,
                              time_per_call(args.min_seconds, peer.act))
                attempt(mode, B, H, 1, actor_row)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        import torch
    except Exception as e:  # ImportError, or a broken install failing inside torch's import
        print(f"bench_torch_peer: PyTorch is not importable ({type(e).__name__}: {e}); install it "
              "in a virtual environment (see this script's header), e.g. python3 -m venv "
              "/tmp/torchvenv && /tmp/torchvenv/bin/pip install torch", file=sys.stderr)
        return 2
    if args.device == "cuda" and not torch.cuda.is_available():
        why = ("this PyTorch build has no CUDA (" + torch.__version__ + ")"
               if torch.version.cuda is None else "no usable CUDA device (driver or GPU missing)")
        print(f"bench_torch_peer: --device cuda requested but {why}; use --device cpu for the "
              "CPU rows", file=sys.stderr)
        return 2
    # fp32 as recur's executors run it: no TF32 in cuBLAS (matmul) or cuDNN (the RNN).
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(1)
    ctx = Context(torch, args.device)
    name = (torch.cuda.get_device_name() if ctx.cuda
            else f"cpu ({torch.get_num_threads()} threads)")
    tf32 = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    print(f"# torch {torch.__version__} (CUDA {torch.version.cuda}), cuDNN "
          f"{torch.backends.cudnn.version()}, device {name}, "
          f"fp32, TF32 {'off' if not any(tf32) else 'ON'} (matmul {tf32[0]}, cudnn {tf32[1]}), "
          f"min-seconds {args.min_seconds}", flush=True)
    out, failed = Printer(args.csv), []
    if any(m in CORE_MODES for m in args.modes):
        out.start("core", f"lstm core (PyTorch), input {args.input}, 1 layer(s); GFLOP/s count "
                  "GEMM work; roofline = torch.mm fp32 GEMM of the step's shape in this run "
                  f"({'host' if not ctx.cuda else 'device'} time)")
        run_core(ctx, args, out, failed)
    if any(m in ACTOR_MODES for m in args.modes):
        out.start("actor", f"policy: obs {args.obs_dim}, encoder [64] tanh, LSTM H, "
                  f"{'shared core' if args.shared_core else 'separate actor/critic cores'}, "
                  "4 actions (Gumbel-max); actor = one act() of B slots incl. host normalize, "
                  "H2D, D2H, sync")
        run_actor(ctx, args, out, failed)
    if failed:
        print(f"bench_torch_peer: {len(failed)} measurement(s) failed: {', '.join(failed)}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
