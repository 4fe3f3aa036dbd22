"""A small Transformer language model written out: token and position embeddings, two
pre-norm decoder blocks with causal self-attention, a tied output layer. Built, then one
training step on random tokens with gradient clipping and AdamW. Needs real PyTorch.

``python transformer_lm.py gpt2`` runs it GPT-2-shaped instead (12 blocks of width 256, 8 heads,
a context of 64, batch 4), as ``make bench PARITY=1`` traces it."""

import sys

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        h = self.ln1(x)
        x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
        return x + self.mlp(self.ln2(x))


class TinyLM(nn.Module):
    def __init__(self, vocab: int = 50, dim: int = 32, heads: int = 4, layers: int = 2,
                 context: int = 16) -> None:
        super().__init__()
        self.tokens = nn.Embedding(vocab, dim)
        self.positions = nn.Embedding(context, dim)
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        self.head.weight = self.tokens.weight  # tied

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        n = idx.shape[1]
        mask = torch.triu(torch.full((n, n), float("-inf")), diagonal=1)
        x = self.tokens(idx) + self.positions(torch.arange(n))
        for block in self.blocks:
            x = block(x, mask)
        return self.head(self.ln(x))


SIZE = {"vocab": 50, "dim": 32, "heads": 4, "layers": 2, "context": 16}
BATCH = 2
if sys.argv[1:] == ["gpt2"]:
    SIZE, BATCH = {"vocab": 1000, "dim": 256, "heads": 8, "layers": 12, "context": 64}, 4

torch.manual_seed(0)
model = TinyLM(**SIZE)
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
tokens = torch.randint(0, SIZE["vocab"], (BATCH, SIZE["context"] + 1))
inputs, targets = tokens[:, :-1], tokens[:, 1:]

optimizer.zero_grad()
logits = model(inputs)
loss = nn.functional.cross_entropy(logits.reshape(-1, SIZE["vocab"]), targets.reshape(-1))
loss.backward()
nn.utils.clip_grad_norm_(model.parameters(), 1.0)
optimizer.step()
print(f"loss {loss.item():.4f}")
