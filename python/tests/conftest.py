"""Shared fixtures: one index built from random numpy vectors and one provider process for the
whole session (started here, stopped by its pid at the end)."""

import os
import pathlib

import numpy as np
import pytest

import privsearch

DOCS, DIM = 600, 48


@pytest.fixture(scope="session")
def vectors():
    rng = np.random.default_rng(20261201)
    # Clustered vectors (a real embedding's shape, not isotropic noise): 12 topics.
    centres = rng.normal(size=(12, DIM))
    labels = rng.integers(0, 12, size=DOCS)
    docs = centres[labels] + 0.35 * rng.normal(size=(DOCS, DIM))
    return docs.astype(np.float32)


@pytest.fixture(scope="session")
def index_dir(tmp_path_factory, vectors):
    out = tmp_path_factory.mktemp("index") / "idx"
    payloads = [f"document {i}: payload text" for i in range(DOCS)]
    summary = privsearch.build_index(out, vectors, ids=[f"d{i}" for i in range(DOCS)],
                                     payloads=payloads, dim=32, record_bytes=128)
    assert summary["documents"] == DOCS and summary["dim"] == 32
    return out


@pytest.fixture(scope="session")
def provider(index_dir):
    with privsearch.Provider(index_dir, threads=2, pir_test_params=True,
                             args=["--key-uploads-per-minute", "0"]) as p:
        yield p


@pytest.fixture(scope="session")
def client(provider, index_dir):
    return provider.client(index_dir)


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead too (reaped by the harness in normal operation).
    stat = pathlib.Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().split(")")[1].split()[0] != "Z"
