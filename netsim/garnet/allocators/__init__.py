"""Router models by name (`garnet.allocator`): each is a switch allocator with the pipeline timing
it implies. A new model is a registration here."""

from __future__ import annotations

from netsim.garnet.allocators.base import SwitchAllocator
from netsim.garnet.allocators.booksim import BookSimAllocator
from netsim.garnet.allocators.garnet import GarnetAllocator

ALLOCATORS: dict[str, type[SwitchAllocator]] = {
    GarnetAllocator.name: GarnetAllocator,
    BookSimAllocator.name: BookSimAllocator,
}
