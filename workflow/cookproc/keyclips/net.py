"""The neural key-clip selector of the paper (Appendix B, Figure 5) and its two ablations.

full:   sentence vector s, the clip's set of visual vectors X = {x_1..x_T};
        attention a = softmax(s . x_i) over the set (padded members masked out);
        attended visual vector v = sum_i a_i x_i;
        fusion = flatten([s; 1] (outer product) [v; 1]);  -> non-linear head -> key-clip probability.
text:   the head sees s alone (the fusion with a constant visual vector reduces to s).
visual: the head sees v alone; with no sentence to attend from, a learned query vector replaces s.

The sentence and visual vectors live in different spaces (e.g. 384-d MiniLM and 2048-d ResNet or
477-d TSM class scores), so both are first projected to a common ``dim``; the product s . x_i is
then the paper's "tensor product" attention score (a bilinear form s^T W_s^T W_x x). The appended 1
(as in Tensor Fusion Networks) keeps s and v themselves in the fused vector besides their products.
"""
from __future__ import annotations

import math

import torch
from torch import nn

VARIANTS = ("text", "visual", "full")


def masked_attention(query: torch.Tensor, keys: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """softmax(query . keys) over the unmasked members, and the attended vector.

    query [B, d], keys [B, T, d], mask [B, T] (True = real member). A clip with an empty set gets
    all-zero weights and a zero vector (not NaN).
    """
    scores = torch.einsum("bd,btd->bt", query, keys) / math.sqrt(keys.shape[-1])
    scores = scores.masked_fill(~mask, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    weights = torch.where(mask, weights, torch.zeros_like(weights))  # rows that were all -inf gave NaN
    attended = torch.einsum("bt,btd->bd", weights, keys)
    return weights, attended


def outer_fusion(s: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """flatten([s; 1] outer [v; 1]): [B, (d_s + 1) * (d_v + 1)]."""
    one = s.new_ones(s.shape[0], 1)
    s1 = torch.cat([s, one], dim=1)
    v1 = torch.cat([v, one], dim=1)
    return torch.einsum("bi,bj->bij", s1, v1).flatten(1)


class KeyClipNet(nn.Module):
    """Key-clip scorer; ``forward`` returns logits [B] (sigmoid = probability)."""

    def __init__(self, variant: str, text_dim: int, visual_dim: int, *, vocab_size: int = 0, dim: int = 32,
                 hidden: int = 64, dropout: float = 0.3):
        super().__init__()
        if variant not in VARIANTS:
            raise ValueError(f"variant must be one of {VARIANTS}, got {variant!r}")
        self.variant = variant
        self.uses_text = variant in ("text", "full")
        self.uses_visual = variant in ("visual", "full")
        if self.uses_text:
            self.text_proj = nn.Sequential(nn.Dropout(dropout), nn.Linear(text_dim, dim))
            # Optional lexical half of s: mean of learned term vectors (ids from cookproc.keyclips.lexical).
            self.lexicon = nn.EmbeddingBag(vocab_size + 1, dim, mode="mean", padding_idx=0) if vocab_size else None
        if self.uses_visual:
            self.visual_proj = nn.Sequential(nn.Dropout(dropout), nn.Linear(visual_dim, dim), nn.Tanh())
        if variant == "visual":
            self.query = nn.Parameter(torch.zeros(dim))
        fused = {"text": dim, "visual": dim, "full": (dim + 1) ** 2}[variant]
        if hidden > 0:
            self.head = nn.Sequential(nn.Dropout(dropout), nn.Linear(fused, hidden), nn.ReLU(),
                                      nn.Dropout(dropout), nn.Linear(hidden, 1))
        else:  # the paper's single non-linear layer: linear map to one logit, sigmoid outside
            self.head = nn.Sequential(nn.Dropout(dropout), nn.Linear(fused, 1))

    def sentence_vector(self, text: torch.Tensor, tokens: torch.Tensor | None) -> torch.Tensor:
        """s [B, dim]: projected sentence embedding (+ mean term vector when a lexicon is used)."""
        s = self.text_proj(text)
        if self.lexicon is not None:
            if tokens is None:
                raise ValueError("this model has a lexicon: pass token ids")
            s = s + self.lexicon(tokens)
        return torch.tanh(s)

    def encode(self, text: torch.Tensor | None, visual: torch.Tensor | None, mask: torch.Tensor | None,
               tokens: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor | None]:
        """The fused vector [B, F] and the attention weights [B, T] (None for text-only)."""
        s = self.sentence_vector(text, tokens) if self.uses_text else None
        if not self.uses_visual:
            return s, None
        x = self.visual_proj(visual)
        query = s if s is not None else self.query.expand(x.shape[0], -1)
        weights, v = masked_attention(query, x, mask)
        if s is None:
            return v, weights
        return outer_fusion(s, v), weights

    def forward(self, text: torch.Tensor | None = None, visual: torch.Tensor | None = None,
                mask: torch.Tensor | None = None, tokens: torch.Tensor | None = None) -> torch.Tensor:
        fused, _ = self.encode(text, visual, mask, tokens)
        return self.head(fused).squeeze(-1)
