"""The AlphaZero-style policy/value network: fully convolutional, depthwise-separable, any board size.

Input: four planes per board from the mover's view (:func:`encode`): own discs,
opponent discs, empty playable cells, and *on board* (1 on every cell of the
layout, obstacles included; 0 in padding). Boards of different sizes share one
batch by padding to the largest: every feature map is multiplied by the
on-board plane after each layer, so a padded cell is exactly what the
convolutions' zero padding is at a board edge, and a board's outputs do not
depend on how much padding it got.

Layers (none depends on H or W): a 3x3 stem, ``blocks`` residual
depthwise-separable blocks (3x3 depthwise, 1x1 pointwise, batch norm), a policy
head (1x1 convolution: one logit per cell, illegal cells masked by the caller)
and a value head (1x1 convolution, masked mean and max over the board's cells,
two linear layers, tanh: the expected outcome for the mover in [-1, 1]).

torch is imported by this module: import it only where a network is needed
(the ``az`` agent does so on first use), never at ``arena`` start.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from engine.layout import Layout

PLANES = 4
OWN, OPPONENT, OBSTACLE = 1, -1, 2
SHIPPED_FILE = "az.pt"


class AzWeightsError(ValueError):
    """A weights file that is missing or is not an ``az`` checkpoint."""


@dataclass(frozen=True)
class AzNetConfig:
    """The network's size: channels of every block and the number of blocks."""

    channels: int = 32
    blocks: int = 4


def encode(grid: np.ndarray) -> np.ndarray:
    """Float32 planes ``[4, H, W]`` of a mover's-view grid (own 1, opponent -1, empty 0, obstacle 2)."""
    return np.stack([grid == OWN, grid == OPPONENT, grid == 0, np.ones(grid.shape, dtype=bool)]).astype(np.float32)


def stack_planes(planes: list[np.ndarray]) -> np.ndarray:
    """One ``[B, 4, H, W]`` batch, each board padded (zeros: off board) to the largest height and width."""
    rows = max(p.shape[1] for p in planes)
    cols = max(p.shape[2] for p in planes)
    batch = np.zeros((len(planes), PLANES, rows, cols), dtype=np.float32)
    for i, p in enumerate(planes):
        batch[i, :, : p.shape[1], : p.shape[2]] = p
    return batch


class SeparableBlock(nn.Module):
    """Residual block: depthwise 3x3, batch norm, ReLU, pointwise 1x1, batch norm, skip, ReLU (masked)."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.depthwise = nn.Conv2d(channels, channels, 3, padding=1, groups=channels, bias=False)
        self.norm1 = nn.BatchNorm2d(channels)
        self.pointwise = nn.Conv2d(channels, channels, 1, bias=False)
        self.norm2 = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.norm1(self.depthwise(x))) * mask
        y = self.norm2(self.pointwise(y)) * mask
        return torch.relu(x + y)


class AzNet(nn.Module):
    """Policy logits ``[B, H*W]`` and value ``[B]`` of a batch of planes ``[B, 4, H, W]``."""

    def __init__(self, config: AzNetConfig = AzNetConfig()) -> None:
        super().__init__()
        self.config = config
        c = config.channels
        self.stem = nn.Conv2d(PLANES, c, 3, padding=1, bias=False)
        self.stem_norm = nn.BatchNorm2d(c)
        self.blocks = nn.ModuleList(SeparableBlock(c) for _ in range(config.blocks))
        self.policy = nn.Conv2d(c, 1, 1)
        self.value_conv = nn.Conv2d(c, c, 1)
        self.value_hidden = nn.Linear(2 * c, c)
        self.value_out = nn.Linear(c, 1)

    def forward(self, planes: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        mask = planes[:, PLANES - 1 : PLANES]
        x = torch.relu(self.stem_norm(self.stem(planes))) * mask
        for block in self.blocks:
            x = block(x, mask)
        logits = self.policy(x).flatten(1)
        v = torch.relu(self.value_conv(x)) * mask
        cells = mask.sum(dim=(2, 3)).clamp(min=1.0)
        mean = v.sum(dim=(2, 3)) / cells
        peak = (v - (1 - mask) * 1e4).amax(dim=(2, 3))
        hidden = torch.relu(self.value_hidden(torch.cat([mean, peak], dim=1)))
        return logits, torch.tanh(self.value_out(hidden)).squeeze(1)


def predict(net: AzNet, planes: list[np.ndarray]) -> tuple[list[np.ndarray], np.ndarray]:
    """Softmax-free outputs for boards of any sizes: each board's ``H*W`` logits (its own shape) and the values."""
    batch = stack_planes(planes)
    with torch.inference_mode():
        logits, values = net(torch.from_numpy(batch))
    grid = logits.numpy().reshape(len(planes), batch.shape[2], batch.shape[3])
    return [grid[i, : p.shape[1], : p.shape[2]].reshape(-1) for i, p in enumerate(planes)], values.numpy().copy()


def layout_planes(layout: Layout) -> np.ndarray:
    """The empty board's grid of a layout (obstacles 2), for shapes in tests and tools."""
    grid = np.zeros(layout.shape, dtype=np.int8)
    for cell in layout.obstacles:
        grid[cell] = OBSTACLE
    return grid


def save_net(net: AzNet, path: str | Path, **metadata: Any) -> Path:
    """Write the weights, the config and ``metadata`` (plain values) to a ``.pt`` file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save({"format": "az-1", "config": asdict(net.config), "state": net.state_dict(), "metadata": metadata}, path)
    return path


def load_net(path: str | Path | None = None) -> AzNet:
    """A network in eval mode from a ``.pt`` file (default: the shipped ``agents/az/data/az.pt``)."""
    source: Any = resources.files("agents.az").joinpath("data", SHIPPED_FILE) if path is None else Path(path)
    if not source.is_file():
        raise AzWeightsError(f"no az weights at {source}: give weights=FILE.pt from `arena train az`")
    with source.open("rb") as handle:
        try:
            saved = torch.load(handle, map_location="cpu", weights_only=True)
        except Exception as error:  # noqa: BLE001  (torch raises many kinds on a bad file)
            raise AzWeightsError(f"{source}: not an az checkpoint ({type(error).__name__})") from None
    if not isinstance(saved, dict) or saved.get("format") != "az-1":
        raise AzWeightsError(f"{source}: not an az checkpoint (written by `arena train az`)")
    net = AzNet(AzNetConfig(**saved["config"]))
    net.load_state_dict(saved["state"])
    net.eval()
    return net


def evaluator(net: AzNet) -> Callable[[list[np.ndarray]], tuple[list[np.ndarray], np.ndarray]]:
    """The search's ``evaluate``: mover's-view grids to (logits per board, values), one batched call."""
    return lambda grids: predict(net, [encode(grid) for grid in grids])
