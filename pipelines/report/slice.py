"""What a study page is: a name, a title, the table whose existence writes it, its body and what it reads."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from resources.warehouse import Warehouse


@dataclass
class Slice:
    """A study page: written when `table` exists, with `body` building its content from the tables `reads`."""

    name: str
    title: str
    table: str
    body: Callable[[Warehouse], str]
    reads: tuple[str, ...]
