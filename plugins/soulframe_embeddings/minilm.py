"""A small BERT encoder forward pass in NumPy: all-MiniLM-L6-v2 without torch.

This module imports numpy at the top: it is only ever imported from inside
:meth:`soulframe_embeddings.local.LocalProvider` on the first embed, never at plugin load.

The computation matches ``sentence-transformers`` for this model: BERT (post-LayerNorm,
exact erf GELU) -> mean pooling over the attention mask -> L2 normalisation. Everything stays
float32: under NumPy 2 promotion rules a single float64 *array* (or a ``np.float64`` scalar)
in an expression promotes the whole result to float64 and halves throughput, so every
constant here is a Python float (weakly typed) or a float32 array.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

import attrs
import numpy as np
import numpy.typing as npt

F32 = npt.NDArray[np.float32]
I64 = npt.NDArray[np.int64]

# Abramowitz & Stegun 7.1.26: erfc(z) ~ poly(t) * exp(-z^2), t = 1 / (1 + P*z), z >= 0, with
# an absolute error below 1.5e-7 -- under float32's resolution at 1.0, so the GELU it gives is
# indistinguishable from torch's exact ``erf`` GELU. NumPy has no erf of its own (scipy is not
# a dependency).
_P = 0.3275911
_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)
_INV_SQRT2 = 1.0 / math.sqrt(2.0)

# rows per GELU block: 32 x 1536 float32 = 192 KB keeps the ~17 passes below in L2 cache
_GELU_ROWS = 32

def softmax_(scores: F32) -> F32:
    """Softmax over the last axis, in place."""
    scores -= scores.max(axis=-1, keepdims=True)
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-1, keepdims=True)
    return scores


def gelu_(x: F32) -> F32:
    """Exact (erf) GELU, in place, in float32. Returns ``x``.

    GELU(x) = x * Phi(x). With q = Phi(-|x|) = erfc(|x|/sqrt 2) / 2 this is
    ``max(x, 0) - |x| * q`` for either sign of x, which needs no sign() or where().
    """
    flat = x.reshape(-1, x.shape[-1])
    for start in range(0, flat.shape[0], _GELU_ROWS):
        blk = flat[start : start + _GELU_ROWS]
        ax = np.abs(blk)
        z = ax * _INV_SQRT2
        t = z * _P
        t += 1.0
        np.reciprocal(t, out=t)
        poly = t * _A[4]
        for a in (_A[3], _A[2], _A[1], _A[0]):
            poly += a
            poly *= t
        np.square(z, out=z)
        np.negative(z, out=z)
        np.exp(z, out=z)
        poly *= z  # erfc(|x|/sqrt 2)
        poly *= ax
        poly *= 0.5  # |x| * Phi(-|x|)
        np.maximum(blk, 0.0, out=blk)
        blk -= poly
    return x


def layer_norm_(x: F32, weight: F32, bias: F32, eps: float) -> F32:
    """LayerNorm over the last axis, in place where it can be. Returns the result."""
    mean = x.mean(axis=-1, keepdims=True)
    x -= mean
    var = np.einsum("...i,...i->...", x, x)[..., None]
    var *= 1.0 / x.shape[-1]
    var += eps
    np.sqrt(var, out=var)
    x /= var
    x *= weight
    x += bias
    return x


@attrs.frozen
class _Layer:
    qkv_w: F32  # (hidden, 3*hidden), query part pre-scaled by 1/sqrt(head_dim)
    qkv_b: F32
    out_w: F32  # (hidden, hidden)
    out_b: F32
    ln1_w: F32
    ln1_b: F32
    ff1_w: F32  # (hidden, intermediate)
    ff1_b: F32
    ff2_w: F32  # (intermediate, hidden)
    ff2_b: F32
    ln2_w: F32
    ln2_b: F32


@attrs.frozen
class BertConfig:
    hidden_size: int = 384
    num_hidden_layers: int = 6
    num_attention_heads: int = 12
    intermediate_size: int = 1536
    max_position_embeddings: int = 512
    layer_norm_eps: float = 1e-12
    hidden_act: str = "gelu"

    @classmethod
    def from_json(cls, path: Path) -> BertConfig:
        try:
            raw: Mapping[str, Any] = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(f"{path}: cannot read the model config: {exc}") from exc
        if raw.get("model_type", "bert") != "bert":
            raise ValueError(f"{path}: model_type is {raw.get('model_type')!r}, expected 'bert'")
        fields = {a.name for a in attrs.fields(cls)}
        cfg = cls(**{k: raw[k] for k in fields if k in raw})
        if cfg.hidden_act != "gelu":
            raise ValueError(f"{path}: hidden_act {cfg.hidden_act!r} is not supported (only 'gelu')")
        if cfg.hidden_size % cfg.num_attention_heads:
            raise ValueError(f"{path}: hidden_size is not a multiple of num_attention_heads")
        return cfg


#: the rearranged tensors a :class:`BertEncoder` runs on, per layer (``L{i}.<name>``)
LAYER_TENSORS = tuple(a.name for a in attrs.fields(_Layer))


def arrange(config: BertConfig, tensors: Mapping[str, Any]) -> dict[str, F32]:
    """The tensors of a Hugging Face ``BertModel`` checkpoint in the layout the forward pass
    runs on: float32, C-contiguous, linear weights transposed to (in, out), Q, K and V fused
    with the attention scale folded into Q. This is the slow part of loading (a copy and a
    transpose of every matrix): :mod:`.weightcache` stores its result so a process can
    memory-map it instead."""
    h = config.hidden_size
    head_dim = h // config.num_attention_heads
    # some exports prefix every name with "bert."
    prefix = "bert." if "bert.embeddings.word_embeddings.weight" in tensors else ""

    def t(name: str) -> F32:
        try:
            arr = tensors[prefix + name]
        except KeyError:
            raise ValueError(f"model.safetensors has no tensor {prefix + name!r}") from None
        return np.ascontiguousarray(arr, dtype=np.float32)

    out: dict[str, F32] = {
        "word": t("embeddings.word_embeddings.weight"),
        "pos": t("embeddings.position_embeddings.weight"),
        "type0": np.ascontiguousarray(t("embeddings.token_type_embeddings.weight")[0]),
        "emb_ln_w": t("embeddings.LayerNorm.weight"),
        "emb_ln_b": t("embeddings.LayerNorm.bias"),
    }
    if out["word"].shape[1] != h:
        raise ValueError(f"word embeddings are {out['word'].shape[1]}-wide, config says {h}")
    scale = np.float32(1.0 / math.sqrt(head_dim))
    for i in range(config.num_hidden_layers):
        p = f"encoder.layer.{i}."
        # torch Linear stores (out, in); transpose once here so the hot path is x @ W.
        # Fusing Q, K and V into one (hidden, 3*hidden) matmul triples its size, and
        # folding the 1/sqrt(d) attention scale into Q saves a pass over the scores.
        qkv_w = np.concatenate(
            [
                t(p + "attention.self.query.weight").T * scale,
                t(p + "attention.self.key.weight").T,
                t(p + "attention.self.value.weight").T,
            ],
            axis=1,
        )
        qkv_b = np.concatenate(
            [
                t(p + "attention.self.query.bias") * scale,
                t(p + "attention.self.key.bias"),
                t(p + "attention.self.value.bias"),
            ]
        )
        layer = {
            "qkv_w": qkv_w,
            "qkv_b": qkv_b,
            "out_w": t(p + "attention.output.dense.weight").T,
            "out_b": t(p + "attention.output.dense.bias"),
            "ln1_w": t(p + "attention.output.LayerNorm.weight"),
            "ln1_b": t(p + "attention.output.LayerNorm.bias"),
            "ff1_w": t(p + "intermediate.dense.weight").T,
            "ff1_b": t(p + "intermediate.dense.bias"),
            "ff2_w": t(p + "output.dense.weight").T,
            "ff2_b": t(p + "output.dense.bias"),
            "ln2_w": t(p + "output.LayerNorm.weight"),
            "ln2_b": t(p + "output.LayerNorm.bias"),
        }
        for name, arr in layer.items():
            out[f"L{i}.{name}"] = np.ascontiguousarray(arr, dtype=np.float32)
    return out


class BertEncoder:
    """A BERT encoder: :meth:`embed` turns padded token ids into mean-pooled, L2-normalised
    sentence vectors.

    Built from a ``model.safetensors`` (Hugging Face ``BertModel`` names) with
    :meth:`from_dir`, or from tensors already :func:`arrange`-d (memory-mapped from the
    weight cache) with :meth:`from_arranged`. Weights are only ever read, so read-only
    memory-mapped arrays serve as they are.
    """

    def __init__(self, config: BertConfig, arranged: Mapping[str, F32]) -> None:
        self.config = config
        h = config.hidden_size
        self.heads = config.num_attention_heads
        self.head_dim = h // self.heads

        def a(name: str) -> F32:
            try:
                return arranged[name]
            except KeyError:
                raise ValueError(f"the arranged weights have no tensor {name!r}") from None

        self.word = a("word")
        self.pos = a("pos")
        self.type0 = a("type0")
        self.emb_ln = (a("emb_ln_w"), a("emb_ln_b"))
        self.layers = tuple(
            _Layer(**{name: a(f"L{i}.{name}") for name in LAYER_TENSORS})
            for i in range(config.num_hidden_layers)
        )
        if self.word.shape[1] != h:
            raise ValueError(f"word embeddings are {self.word.shape[1]}-wide, config says {h}")

    @classmethod
    def from_arranged(cls, config: BertConfig, arranged: Mapping[str, F32]) -> BertEncoder:
        return cls(config, arranged)

    @classmethod
    def from_dir(cls, model_dir: Path) -> BertEncoder:
        """Read and rearrange ``model.safetensors`` (no cache: see :mod:`.weightcache`)."""
        config = BertConfig.from_json(model_dir / "config.json")
        return cls(config, arrange(config, read_safetensors(model_dir / "model.safetensors")))

    @property
    def dimensions(self) -> int:
        return self.config.hidden_size

    def embed(self, ids: I64, mask: F32, *, normalize: bool = True) -> F32:
        """Sentence vectors for a padded batch.

        :param ids: ``(batch, length)`` token ids, ``[CLS] ... [SEP]`` then padding.
        :param mask: ``(batch, length)`` float32, 1.0 for real tokens, 0.0 for padding.
        :returns: ``(batch, hidden)`` float32; mean-pooled over the mask and, when
            ``normalize``, scaled to unit length (unnormalised vectors are what a caller
            averages when one text spans several windows).
        """
        hidden = self._encode(ids, mask)
        counts = mask.sum(axis=1, keepdims=True)
        pooled = np.einsum("bl,blh->bh", mask, hidden) / np.maximum(counts, 1e-9)
        pooled = pooled.astype(np.float32, copy=False)
        return l2_normalize(pooled) if normalize else pooled

    def _encode(self, ids: I64, mask: F32) -> F32:
        cfg = self.config
        b, n = ids.shape
        if n > cfg.max_position_embeddings:
            raise ValueError(f"{n} tokens exceed the model's {cfg.max_position_embeddings} positions")
        hsz, heads, d = cfg.hidden_size, self.heads, self.head_dim
        eps = cfg.layer_norm_eps
        x = self.word[ids]  # (b, n, h): a gather makes a new, contiguous array
        x += self.pos[:n]
        x += self.type0
        x = layer_norm_(x, *self.emb_ln, cfg.layer_norm_eps)
        # additive attention bias: 0 for real tokens, a large negative number for padding so
        # exp() gives exactly 0 and padding never changes a real token's result
        bias = ((mask - 1.0) * 1e30).astype(np.float32)[:, None, None, :]
        x2 = x.reshape(b * n, hsz)
        for layer in self.layers:
            qkv = x2 @ layer.qkv_w
            qkv += layer.qkv_b
            # (b, n, 3, heads, d) -> three (b, heads, n, d) views
            qkv4 = qkv.reshape(b, n, 3, heads, d).transpose(2, 0, 3, 1, 4)
            q, k, v = qkv4[0], qkv4[1], qkv4[2]
            scores = q @ k.transpose(0, 1, 3, 2)  # (b, heads, n, n)
            scores += bias
            softmax_(scores)
            ctx = (scores @ v).transpose(0, 2, 1, 3).reshape(b * n, hsz)
            attn = ctx @ layer.out_w
            attn += layer.out_b
            attn += x2
            x2 = layer_norm_(attn, layer.ln1_w, layer.ln1_b, eps)
            ff = x2 @ layer.ff1_w
            ff += layer.ff1_b
            gelu_(ff)
            out = cast(F32, ff @ layer.ff2_w)  # numpy's stubs lose float32 through @
            out += layer.ff2_b
            out += x2
            x2 = layer_norm_(out, layer.ln2_w, layer.ln2_b, eps)
        return x2.reshape(b, n, hsz)


def l2_normalize(v: F32) -> F32:
    """Rows scaled to unit length (a zero row stays zero), float32."""
    v = np.asarray(v, dtype=np.float32)
    norms = np.sqrt(np.einsum("...i,...i->...", v, v))[..., None]
    out: F32 = (v / np.maximum(norms, 1e-12)).astype(np.float32, copy=False)
    return out


def read_safetensors(path: Path) -> dict[str, F32]:
    """The tensors of a ``.safetensors`` file, with the ``safetensors`` package."""
    from safetensors.numpy import load_file

    return cast(dict[str, F32], load_file(str(path)))
