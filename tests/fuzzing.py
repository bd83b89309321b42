"""A deterministic mutation fuzzer over real documents: byte flips, truncations, spliced
junk, copied and zeroed regions. Shared by the slow test tier (tests/core/ingest/test_fuzz.py)
and the large campaign (bench/fuzz.py).

Every mutant is named by its source, its number and what was done to it, and is the same
bytes for the same seed on every machine, so a failure found once can be made again.

Containers other than PDF plug in through :data:`CONTAINERS`: a suffix names the
mutations that make sense for it. A zip-based container (DOCX, EPUB, ODT) gets the byte
mutations too (they damage the zip directory and deflate streams), and ``zip_member``,
which damages one member inside a zip that still opens, so the reader's own parser is
reached rather than only the zip reader.
"""

from __future__ import annotations

import io
import random
import zipfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

Mutator = Callable[[bytes, random.Random], tuple[bytes, str]]


def flip_bytes(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """XOR 1 to 64 bytes at random places with random values."""
    out = bytearray(data)
    count = rng.randint(1, 64)
    for _ in range(count):
        out[rng.randrange(len(out))] ^= rng.randint(1, 255)
    return bytes(out), f"flip {count} bytes"


def truncate(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """Cut the file anywhere (a download or copy that stopped)."""
    keep = rng.randint(0, len(data) - 1)
    return data[:keep], f"truncate at {keep} of {len(data)}"


def splice_junk(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """Insert or overwrite 1 byte to 4 KB of random bytes at a random place."""
    junk = rng.randbytes(rng.randint(1, 4096))
    at = rng.randrange(len(data))
    if rng.random() < 0.5:
        return data[:at] + junk + data[at:], f"insert {len(junk)} junk bytes at {at}"
    return data[:at] + junk + data[at + len(junk):], f"overwrite {len(junk)} bytes at {at} with junk"


def copy_region(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """Copy a region of the file over another place (a sync tool's torn block)."""
    size = rng.randint(16, max(16, min(65536, len(data) // 4)))
    src, dst = rng.randrange(len(data)), rng.randrange(len(data))
    block = data[src:src + size]
    return data[:dst] + block + data[dst + len(block):], f"copy {len(block)} bytes from {src} to {dst}"


def zero_region(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """Zero a 512-byte-aligned block (a lost disk sector)."""
    size = 512 * rng.randint(1, 16)
    at = (rng.randrange(len(data)) // 512) * 512
    block = min(size, len(data) - at)
    return data[:at] + bytes(block) + data[at + block:], f"zero {block} bytes at {at}"


def stack(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """Two or three of the other byte mutations, one after another."""
    done = []
    for _ in range(rng.randint(2, 3)):
        mutate = rng.choice(BYTE_MUTATIONS)
        data, what = mutate(data, rng) if data else (data, "empty")
        done.append(what)
    return data, " + ".join(done)


def zip_member(data: bytes, rng: random.Random) -> tuple[bytes, str]:
    """Damage the bytes of one member of a zip container, keeping the zip readable."""
    try:
        source = zipfile.ZipFile(io.BytesIO(data))
        members = [(info, source.read(info.filename)) for info in source.infolist()]
    except (zipfile.BadZipFile, OSError, ValueError):
        return flip_bytes(data, rng)
    candidates = [i for i, (info, body) in enumerate(members) if body and not info.is_dir()]
    if not candidates:
        return flip_bytes(data, rng)
    pick = rng.choice(candidates)
    body, what = rng.choice(BYTE_MUTATIONS[:3])(members[pick][1], rng)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for i, (info, member) in enumerate(members):
            target.writestr(info, body if i == pick else member)
    return out.getvalue(), f"{members[pick][0].filename}: {what}"


BYTE_MUTATIONS: tuple[Mutator, ...] = (flip_bytes, truncate, splice_junk, copy_region, zero_region)
# Which mutations each container gets (by file suffix). A new reader adds its suffix here.
CONTAINERS: dict[str, tuple[Mutator, ...]] = {
    ".pdf": (*BYTE_MUTATIONS, stack),
    ".docx": (*BYTE_MUTATIONS, stack, zip_member, zip_member),
    ".epub": (*BYTE_MUTATIONS, stack, zip_member, zip_member),
    ".odt": (*BYTE_MUTATIONS, stack, zip_member, zip_member),
}


@dataclass(frozen=True)
class Mutant:
    name: str  # "<source stem>-<number>.<suffix>"
    source: str
    mutation: str
    data: bytes


def mutants(sources: Sequence[Path], count: int, seed: int = 0) -> Iterator[Mutant]:
    """``count`` mutants of ``sources`` in turn (the same ones for the same seed)."""
    rng = random.Random(seed)
    originals = [(path, path.read_bytes()) for path in sources]
    for number in range(count):
        path, data = originals[number % len(originals)]
        mutators = CONTAINERS.get(path.suffix.lower(), BYTE_MUTATIONS)
        mutate = rng.choice(mutators)
        mutated, what = mutate(data, random.Random(rng.getrandbits(64)))
        yield Mutant(f"{path.stem}-{number:05d}{path.suffix.lower()}", path.name, f"{mutate.__name__}: {what}",
                     mutated)


def write_mutants(folder: Path, sources: Sequence[Path], count: int, seed: int = 0) -> dict[str, str]:
    """Write ``count`` mutants into ``folder``; returns file name -> what was done to it."""
    folder.mkdir(parents=True, exist_ok=True)
    done: dict[str, str] = {}
    for mutant in mutants(sources, count, seed):
        (folder / mutant.name).write_bytes(mutant.data)
        done[mutant.name] = f"{mutant.source}: {mutant.mutation}"
    return done
