"""privsearch: privacy-aware semantic search from Python.

A provider holds documents and their embedding vectors; a client finds the best documents for
its query vectors without showing the provider the query, the scores, the ranking, or (with
``Client.fetch``) which document it reads. The client scans a public PQ index locally for K
candidates, sends their IDs with a CKKS-encrypted query, and decrypts the provider's scores.

Quick start::

    import numpy as np, privsearch
    privsearch.build_index("idx", doc_vectors)              # your embeddings, one row per doc
    with privsearch.Provider("idx") as provider:             # the provider process, on loopback
        client = provider.client("idx")
        ids, scores = client.search(query_vector, k=100, top=10)

Errors are ``privsearch.Error`` subclasses (``privsearch.errors``) carrying the status code and,
for a provider's refusal, its typed error code.
"""

from __future__ import annotations

import os
import pathlib
import tempfile
from typing import List, Optional, Sequence, Tuple, Union

import numpy as np

from . import errors
from ._privsearch import ProviderProcess as _ProviderProcess
from ._privsearch import SearchClient as _SearchClient
from ._privsearch import build_from_collection as _build_from_collection
from ._privsearch import build_from_vectors as _build_from_vectors
from ._privsearch import default_provider_binary as _default_provider_binary
from ._privsearch import projected_documents as _projected_documents
from .errors import (DataLossError, Error, FailedPreconditionError, InternalError,
                     InvalidArgumentError, NotFoundError, OutOfRangeError,
                     ResourceExhaustedError, UnauthenticatedError, UnavailableError)

__all__ = ["build_index", "build_index_from_collection", "projected_documents", "Provider",
           "Client", "Error", "InvalidArgumentError", "OutOfRangeError",
           "FailedPreconditionError", "DataLossError", "ResourceExhaustedError",
           "UnavailableError", "NotFoundError", "InternalError", "UnauthenticatedError",
           "errors"]

PathLike = Union[str, os.PathLike]


def build_index(out_dir: PathLike, doc_vectors: np.ndarray, ids: Optional[Sequence[str]] = None,
                payloads: Optional[Sequence[Union[bytes, str]]] = None, *, dim: int = 672,
                pq_m: int = 0,
                record_bytes: int = 2048, seed: int = 1, access_private: bool = True) -> dict:
    """Builds an index from your own document embeddings.

    ``doc_vectors``: 2-D array, one row per document (float32 is used as is; other real dtypes
    are converted once). ``ids``: one string per row (default "0", "1", ...). ``payloads``: what
    a client may fetch privately per document, ``bytes`` (stored byte for byte: any bytes) or
    ``str`` (stored as its UTF-8 encoding); default empty. A payload longer than
    ``record_bytes - 4`` raises InvalidArgumentError (nothing is cut). ``dim``: projected
    dimension d' (capped at the embedding dimension); ``pq_m``: PQ sub-quantizers (0: d'/8).
    ``access_private``: also build the scoring database that ``Client.search(...,
    access_private=True)`` needs (balanced clusters, 4-bit vectors, an LWE hint).
    Returns a summary of the manifest (version, documents, dimensions).
    """
    return _build_from_vectors(pathlib.Path(out_dir), doc_vectors,
                               None if ids is None else [str(i) for i in ids],
                               None if payloads is None else _payload_bytes(payloads),
                               dim, pq_m, record_bytes, seed, access_private)


def _payload_bytes(payloads: Sequence[Union[bytes, str]]) -> list:
    """Each payload as the bytes to store: bytes-like as they are, str as UTF-8."""
    out = []
    for i, p in enumerate(payloads):
        if isinstance(p, str):
            out.append(p.encode("utf-8"))
        elif isinstance(p, (bytes, bytearray, memoryview)):
            out.append(bytes(p))
        else:
            raise InvalidArgumentError(
                f"payloads[{i}]: expected bytes or str, got {type(p).__name__}")
    return out


def build_index_from_collection(out_dir: PathLike, collection: PathLike, *,
                                encoder: str = "lexical", dim: int = 672, seed: int = 1,
                                access_private: bool = True) -> dict:
    """Builds an index from a BEIR collection directory with a built-in text encoder
    (``lexical``, ``glove-idf`` or ``glove-sif``), as ``privsearch build --collection`` does.
    Clients of such an index can ``search_text``."""
    return _build_from_collection(pathlib.Path(out_dir), pathlib.Path(collection), encoder, dim,
                                  seed, access_private)


def projected_documents(index_dir: PathLike) -> np.ndarray:
    """The index's projected document vectors (the provider's exact store), for evaluating
    results against exact inner products. Evaluation only: a real client never has them."""
    return _projected_documents(pathlib.Path(index_dir))


def _private_clusters(access_private: bool, clusters: int) -> int:
    """The C++ client's mode switch: 0 for candidate mode, else the clusters scored."""
    if not access_private:
        return 0
    if clusters < 1:
        raise InvalidArgumentError(f"clusters must be at least 1 (got {clusters})")
    return int(clusters)


def _provider_binary() -> str:
    env = os.environ.get("PRIVSEARCH_PROVIDER_BIN")
    if env:
        return env
    bundled = pathlib.Path(__file__).parent / "bin" / "privsearch-provider"
    if bundled.exists():
        return str(bundled)
    return _default_provider_binary


class Provider:
    """The provider process (``privsearch-provider``) serving an index on 127.0.0.1 over TLS
    with a throwaway self-signed certificate; a context manager that stops it (by its pid).

    ``args``: more provider options (see ``privsearch-provider --help``), e.g.
    ``["--scores-per-key", "100000"]``. Budgets are kept in ``work_dir`` (default: a temporary
    directory removed on exit).
    """

    def __init__(self, index_dir: PathLike, *, threads: Optional[int] = None,
                 args: Sequence[str] = (), work_dir: Optional[PathLike] = None,
                 pir_test_params: bool = False, start_timeout_s: int = 300):
        self.index_dir = pathlib.Path(index_dir)
        self._tmp = None
        if work_dir is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="privsearch-provider-")
            work_dir = self._tmp.name
        self.work_dir = pathlib.Path(work_dir)
        extra = list(args)
        if threads is not None:
            extra += ["--threads", str(threads)]
        if pir_test_params:
            extra.append("--pir-test-params")
        self.pir_test_params = pir_test_params
        self._process = _ProviderProcess(pathlib.Path(_provider_binary()), self.index_dir,
                                         self.work_dir, extra, start_timeout_s)

    host = "127.0.0.1"

    @property
    def port(self) -> int:
        return self._process.port

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    @property
    def fingerprint(self) -> str:
        """SHA-256 fingerprint of the provider's certificate (clients pin it)."""
        return self._process.fingerprint

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def running(self) -> bool:
        return self._process.running

    def client(self, index_dir: Optional[PathLike] = None, **kwargs) -> "Client":
        """A Client of this provider (its address and pinned fingerprint filled in)."""
        return Client(index_dir or self.index_dir, self.host, self.port,
                      fingerprint=self.fingerprint, pir_test_params=self.pir_test_params,
                      **kwargs)

    def stop(self) -> None:
        """Stops the process (SIGTERM, in-flight requests finish) and waits for it."""
        self._process.stop()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> "Provider":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = f"pid {self.pid} on {self.address}" if self.running else "stopped"
        return f"<privsearch.Provider {state}>"


Hits = Tuple[np.ndarray, np.ndarray]


class Client:
    """A private-search client of one provider for one index.

    Connects over TLS pinning ``fingerprint`` (or trusting ``ca_pem``), loads the index's public
    artifacts from ``index_dir``, and keeps the CKKS secret key in this process. ``token``: a
    bearer token for providers started with ``--auth-tokens`` (default ``$PRIVSEARCH_TOKEN``).
    ``trust_key``: the operator's public signing key (``privsearch keygen-signing``'s ``.pub``);
    the index must then be signed by it and not older than any version this client has seen
    (remembered in ``seen_versions``, default ``~/.local/state/privsearch/seen-manifests.json``),
    else ``UnauthenticatedError``, ``NotFoundError`` (unsigned) or ``FailedPreconditionError``
    (rollback). ``candidate_index``: ``"flat"`` (the PQ artifact in ``index_dir``), ``"ivf"`` (its
    IVF directory: the lists a query probes are fetched from the provider and cached in
    ``list_cache``, default ``~/.cache/privsearch/lists``), or ``"auto"`` (flat when
    ``index_dir`` holds it). ``private_lists``: fetch those lists by PIR instead (a provider
    started with ``--pir-lists``; else ``FailedPreconditionError``): the provider learns how many
    lists were not cached, not which, at a cost of one PIR query per list (docs/SCALE.md);
    ``constant_list_fetches``: with it, every probed list every search, cached or not, so the
    provider sees ``nprobe`` queries whatever the cache holds.
    """

    def __init__(self, index_dir: PathLike, host: str, port: int, *, fingerprint: str = "",
                 ca_pem: str = "", token: Optional[str] = None, deadline_ms: int = 30000,
                 pir_test_params: bool = False, trust_key: Optional[PathLike] = None,
                 seen_versions: Optional[PathLike] = None, candidate_index: str = "auto",
                 list_cache: Optional[PathLike] = None, private_lists: bool = False,
                 constant_list_fetches: bool = False):
        if not fingerprint and not ca_pem:
            raise InvalidArgumentError("give the provider's certificate fingerprint or a CA")
        self._client = _SearchClient(pathlib.Path(index_dir), host, int(port), fingerprint,
                                     ca_pem, token or os.environ.get("PRIVSEARCH_TOKEN", ""),
                                     deadline_ms, pir_test_params,
                                     str(trust_key) if trust_key else "",
                                     str(seen_versions) if seen_versions else "",
                                     candidate_index, str(list_cache) if list_cache else "",
                                     private_lists, constant_list_fetches)

    @property
    def input_dim(self) -> int:
        """Dimension of the raw query vectors the index expects."""
        return self._client.input_dim

    @property
    def dim(self) -> int:
        """Projected dimension d' (what is encrypted)."""
        return self._client.dim

    @property
    def artifact_version(self) -> str:
        return self._client.artifact_version

    def search(self, query_vectors: np.ndarray, k: int = 100, top: int = 10, *,
               access_private: bool = False, clusters: int = 8,
               nprobe: int = 0) -> Union[Hits, List[Hits]]:
        """Private search with your own query vectors.

        A 1-D array is one query and returns ``(ids, scores)``; a 2-D array searches a batch and
        returns one ``(ids, scores)`` per row. ``ids`` are document rows (int64, best first),
        ``scores`` the decrypted inner products with the unit-normalized projected query.
        ``k``: PQ candidates reranked by the provider; ``top``: results kept.
        ``access_private=True``: the provider sees no candidate IDs; it scores ``clusters`` whole
        clusters under LWE (the ``k`` local candidates pick them) and ``scores`` are the exact
        integer scores of the 4-bit document vectors (docs/SECURITY.md).
        ``nprobe``: IVF lists probed per query (0: the default, 32); ignored by a flat index.
        """
        array = np.asarray(query_vectors)
        results = self._client.search(array, k, top, _private_clusters(access_private, clusters),
                                      nprobe)
        return results[0] if array.ndim == 1 else results

    def search_text(self, text: str, k: int = 100, top: int = 10, *,
                    access_private: bool = False, clusters: int = 8, nprobe: int = 0) -> Hits:
        """Private search with text, for an index built with a text encoder (``access_private``
        and ``nprobe`` as in ``search``)."""
        return self._client.search_text(text, k, top,
                                        _private_clusters(access_private, clusters), nprobe)

    def document_ids(self, rows: Sequence[int]) -> List[str]:
        """The documents' own ids (the corpus ``_id``, or the ``ids`` given to ``build_index``)
        of result rows, e.g. ``client.document_ids(ids)`` after ``search``. Read from the signed
        id table the client holds: nothing is sent to the provider. ``""`` for an index built
        before ids."""
        return self._client.document_ids([int(r) for r in rows])

    def project(self, query_vector: np.ndarray) -> np.ndarray:
        """The projected query (evaluation against ``projected_documents``)."""
        return self._client.project(np.asarray(query_vector))

    def fetch(self, doc_id: int) -> bytes:
        """Reads one document's payload by private information retrieval (hintless PIR, the
        provider's default backend): the provider learns not which. Returns the payload's bytes
        exactly as stored (``fetch_text`` decodes them), checked against the signed index. Safe to call from
        several threads (the fetches are served one after the other)."""
        return self._client.fetch(int(doc_id))

    def fetch_text(self, doc_id: int) -> str:
        """``fetch`` decoded as UTF-8 (a payload given as ``str``, or an index built from a
        collection: "title\\n\\ntext"); UnicodeDecodeError for one that is not text."""
        return self.fetch(doc_id).decode("utf-8")

    @property
    def last_search_ms(self) -> float:
        """End-to-end time of the last search inside the C++ client (for overhead figures)."""
        return self._client.last_search_ms
