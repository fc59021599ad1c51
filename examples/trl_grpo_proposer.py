"""A few GRPO steps with TRL on the CPU: train a small proposer LLM against
``hrl reward-server``, then evaluate it back through ``hrl eval --proposer llm:...``.

It proves the path that scales to a GPU cluster (the same dataset, the same reward
server, a bigger model and more steps); on a CPU with a 135M model it shows mechanics,
not learning. Not part of ``make test``. Run from the repository root::

    cargo build --release
    python3 examples/trl_grpo_proposer.py --suite suites/smoke.toml --limit 2 \\
        --steps 4 --out /tmp/trl-proposer

What it does:

1. Creates (once) a private virtual environment ``.venv-trl`` (``--venv``) with
   torch, transformers, trl, datasets, accelerate and gguf installed by pip by package
   name, and re-runs itself inside it.
2. ``hrl contexts export`` of the suite into ``OUT/contexts`` (the dataset), and
   ``hrl reward-server`` on a free loopback port (log in ``OUT/reward``).
3. Loads the proposer model from an installed GGUF through transformers' GGUF
   support (``--model-gguf``, default ``$HRL_HOME/models/smollm2-135m.gguf``,
   de-quantized once into ``OUT/base-hf``; any Hugging Face model directory with
   ``--model-dir`` instead) and trains it with
   ``GRPOTrainer`` for ``--steps`` steps: ``--generations`` completions per prompt,
   rewards from ``examples/reward_trl.py`` (context ids from the dataset's
   ``context_id`` column). The trained model goes to ``OUT/model``.
4. Serves the trained model on loopback through a minimal OpenAI-compatible
   ``/v1/chat/completions`` (this file, standard library HTTP) and runs
   ``hrl eval --suite SUITE --proposer llm:openai:http://127.0.0.1:PORT/v1#trained``
   into ``OUT/eval``, so the trained proposer is measured exactly as any other.

``--skip-eval`` stops after training; ``--eval-only`` runs step 4 on ``OUT/model``.

Environment: ``HRL`` (the hrl binary, default ``target/release/hrl``), ``HRL_HOME``.
"""

import argparse
import hashlib
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ["torch", "transformers", "trl", "datasets", "accelerate", "gguf"]


def ensure_venv(venv: Path) -> None:
    """Create the venv and install the packages (idempotent), then re-exec inside it."""
    py = venv / "bin" / "python"
    if Path(sys.prefix).resolve() == venv.resolve():
        return
    if not py.exists():
        subprocess.check_call([sys.executable, "-m", "venv", str(venv)])
    probe = "import torch, transformers, trl, datasets, accelerate, gguf"
    if subprocess.call([str(py), "-c", probe], stderr=subprocess.DEVNULL) != 0:
        print(f"installing {' '.join(PACKAGES)} into {venv}", file=sys.stderr)
        subprocess.check_call([str(py), "-m", "pip", "install", "--quiet", *PACKAGES])
    os.execv(str(py), [str(py), *sys.argv])


def hrl_home() -> Path:
    if os.environ.get("HRL_HOME"):
        return Path(os.environ["HRL_HOME"])
    xdg = os.environ.get("XDG_CACHE_HOME")
    return Path(xdg) / "harness-rl" if xdg else Path.home() / ".cache" / "harness-rl"


def suite_flags(a) -> list:
    flags = ["--suite", a.suite]
    if a.limit:
        flags += ["--limit", str(a.limit)]
    for t in a.task:
        flags += ["--task", t]
    if a.executor:
        flags += ["--executor", a.executor]
    return flags


def export_contexts(hrl: str, a, out: Path) -> Path:
    subprocess.check_call([hrl, "contexts", "export", *suite_flags(a), "--out", str(out)])
    return out / "contexts.jsonl"


def start_reward_server(hrl: str, a, log_dir: Path):
    proc = subprocess.Popen(
        [hrl, "reward-server", *suite_flags(a), "--addr", "127.0.0.1:0",
         "--out", str(log_dir), "--validity-bonus", str(a.validity_bonus)],
        stdout=subprocess.PIPE, text=True,
    )
    url = proc.stdout.readline().strip()
    if not url.startswith("http://"):
        proc.kill()
        raise SystemExit(f"hrl reward-server did not start (first line {url!r})")
    return proc, url


def gguf_to_hf(gguf: Path, out: Path) -> Path:
    """De-quantize a GGUF into a plain Hugging Face directory (once). Training the
    GGUF-loaded model directly is refused by transformers (it is flagged quantized
    even though its weights were de-quantized to floats)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    done = out / "config.json"
    if not done.exists():
        tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
        # Newer transformers keep a GGUF quantizer attached even when every weight was
        # unpacked to floats on the CPU; a dense model is a plain model.
        if getattr(model, "hf_quantizer", None) is not None:
            if not all(p.dtype.is_floating_point for p in model.parameters()):
                raise SystemExit(f"{gguf}: weights stayed packed; pass --model-dir instead")
            model.hf_quantizer = None
            if hasattr(model.config, "quantization_config"):
                del model.config.quantization_config
        model.save_pretrained(str(out))
        tok.save_pretrained(str(out))
        cfg = json.loads(done.read_text())
        if cfg.pop("quantization_config", None) is not None:
            done.write_text(json.dumps(cfg, indent=1))
    return out


def load_model(a, out: Path):
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if a.model_dir:
        src = Path(a.model_dir)
    else:
        gguf = Path(a.model_gguf or hrl_home() / "models" / "smollm2-135m.gguf")
        src = gguf_to_hf(gguf, out / "base-hf")
    tok = AutoTokenizer.from_pretrained(str(src))
    model = AutoModelForCausalLM.from_pretrained(str(src))
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    return model, tok


def train(a, dataset_path: Path, url: str, out: Path):
    import torch
    from datasets import load_dataset
    from trl import GRPOConfig, GRPOTrainer

    sys.path.insert(0, str(ROOT / "examples"))
    from reward_trl import HarnessReward

    torch.manual_seed(a.seed)
    model, tok = load_model(a, out)
    ds = load_dataset("json", data_files=str(dataset_path))["train"]
    keep = {"prompt", "context_id", "task"}
    ds = ds.remove_columns([c for c in ds.column_names if c not in keep])
    # Enough rows for the steps (a context repeats; GRPO samples groups per row).
    reps = max(1, (a.steps * a.batch) // max(1, len(ds)) + 1)
    from datasets import concatenate_datasets

    ds = concatenate_datasets([ds] * reps)
    reward = HarnessReward(url)
    cfg = GRPOConfig(
        output_dir=str(out / "trainer"),
        max_steps=a.steps,
        per_device_train_batch_size=a.batch,
        num_generations=a.generations,
        max_completion_length=a.max_completion_tokens,
        learning_rate=a.lr,
        logging_steps=1,
        save_strategy="no",
        report_to=[],
        use_cpu=True,
        bf16=False,
        seed=a.seed,
        temperature=a.temperature,
    )
    trainer = GRPOTrainer(
        model=model, processing_class=tok, reward_funcs=[reward], args=cfg, train_dataset=ds
    )
    t0 = time.time()
    trainer.train()
    wall = time.time() - t0
    model_dir = out / "model"
    trainer.save_model(str(model_dir))
    tok.save_pretrained(str(model_dir))
    history = trainer.state.log_history
    (out / "train_log.json").write_text(json.dumps({"wall_s": wall, "log": history}, indent=1))
    print(f"trained {a.steps} GRPO steps in {wall:.0f} s; model in {model_dir}")
    return model, tok, model_dir


def weights_id(model_dir: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(model_dir.glob("*.safetensors")):
        h.update(p.read_bytes())
    return "sha256:" + h.hexdigest()


def serve_openai(model, tok, name: str, model_id: str):
    """A minimal OpenAI-compatible chat endpoint for the trained model (loopback)."""
    import torch
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _send(self, code, body):
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path.rstrip("/") == "/v1/models":
                self._send(200, {"object": "list", "data": [
                    {"id": name, "object": "model", "hrl_model_id": model_id}]})
            else:
                self._send(404, {"error": {"message": "not found", "type": "invalid_request_error"}})

        def do_POST(self):
            if self.path.rstrip("/") != "/v1/chat/completions":
                return self._send(404, {"error": {"message": "not found", "type": "invalid_request_error"}})
            try:
                self._complete(json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0")))))
            except Exception as e:  # answer, so the client sees the reason
                self._send(500, {"error": {"message": repr(e), "type": "server_error"}})

        def _complete(self, req):
            enc = tok.apply_chat_template(req["messages"], add_generation_prompt=True,
                                          return_tensors="pt", return_dict=True)
            ids = enc["input_ids"]
            temperature = float(req.get("temperature", 1.0))
            max_new = int(req.get("max_tokens") or 256)
            with lock:
                torch.manual_seed(int(req.get("seed", 0)))
                with torch.no_grad():
                    gen = model.generate(
                        ids, max_new_tokens=max_new, do_sample=temperature > 0,
                        temperature=max(temperature, 1e-5), top_p=float(req.get("top_p", 1.0)),
                        pad_token_id=tok.pad_token_id,
                    )
            new = gen[0, ids.shape[1]:]
            text = tok.decode(new, skip_special_tokens=True)
            finish = "length" if len(new) >= max_new else "stop"
            self._send(200, {
                "id": "chatcmpl-trl", "object": "chat.completion", "model": name,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                             "finish_reason": finish}],
                "usage": {"prompt_tokens": int(ids.shape[1]), "completion_tokens": int(len(new)),
                          "total_tokens": int(ids.shape[1] + len(new))},
            })

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/v1"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--suite", default=str(ROOT / "suites" / "smoke.toml"))
    ap.add_argument("--limit", type=int, default=2)
    ap.add_argument("--task", action="append", default=[])
    ap.add_argument("--executor", default=None, help="executor SPEC (the suite's by default)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--venv", default=str(ROOT / ".venv-trl"))
    ap.add_argument("--model-gguf", default=None)
    ap.add_argument("--model-dir", default=None)
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--generations", type=int, default=2)
    ap.add_argument("--max-completion-tokens", type=int, default=256)
    ap.add_argument("--temperature", type=float, default=0.9)
    ap.add_argument("--lr", type=float, default=1e-6)
    ap.add_argument("--validity-bonus", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--skip-eval", action="store_true", help="train only")
    ap.add_argument("--eval-only", action="store_true", help="evaluate OUT/model only")
    a = ap.parse_args()
    ensure_venv(Path(a.venv))
    hrl = os.environ.get("HRL", str(ROOT / "target" / "release" / "hrl"))
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    if a.eval_only:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        model_dir = out / "model"
        tok = AutoTokenizer.from_pretrained(str(model_dir))
        model = AutoModelForCausalLM.from_pretrained(str(model_dir))
    else:
        dataset = export_contexts(hrl, a, out / "contexts")
        proc, url = start_reward_server(hrl, a, out / "reward")
        try:
            model, tok, model_dir = train(a, dataset, url, out)
        finally:
            proc.kill()
            proc.wait()
    if a.skip_eval:
        return
    model.eval()
    name = "trained-proposer"
    server, base = serve_openai(model, tok, name, weights_id(model_dir))
    try:
        cmd = [hrl, "eval", *suite_flags(a), "--proposer", "identity",
               "--proposer", f"llm:openai:{base}#{name},max_connections=1",
               "--out", str(out / "eval"), "--no-progress"]
        print(" ".join(cmd))
        subprocess.check_call(cmd)
    finally:
        server.shutdown()


if __name__ == "__main__":
    main()
