"""The Python package end to end: an index from numpy vectors, a real provider process over
TLS on loopback, private searches checked against numpy's exact inner products of the projected
vectors, a private fetch, every bad input raising the right exception, the CLI's own-vector
search, and no process left behind."""

import hashlib
import json
import shutil
import subprocess
import threading

import numpy as np
import pytest

import privsearch
from conftest import DIM, DOCS, process_alive


def exact_top(index_dir, client, query, top):
    """Top-`top` documents and scores by exact inner products of the projected vectors."""
    docs = privsearch.projected_documents(index_dir)
    z = client.project(query).astype(np.float64)
    scores = docs.astype(np.float64) @ (z / np.linalg.norm(z))
    order = np.argsort(-scores, kind="stable")[:top]
    return order, scores[order]


def test_package_imports_and_documents_itself():
    assert privsearch.Client.search.__doc__ and privsearch.build_index.__doc__
    assert issubclass(privsearch.InvalidArgumentError, privsearch.Error)


def test_search_matches_exact_inner_products(index_dir, client, vectors):
    rng = np.random.default_rng(7)
    n = 200
    queries = vectors[rng.choice(DOCS, n, replace=False)] + 0.2 * rng.normal(size=(n, DIM))
    queries = queries.astype(np.float32)
    results = client.search(queries, k=DOCS, top=10)  # K = N: the exact ranking is reachable
    assert len(results) == n
    matches = 0
    for q, (ids, scores) in zip(queries, results):
        assert ids.dtype == np.int64 and scores.dtype == np.float32 and len(ids) == 10
        want_ids, want_scores = exact_top(index_dir, client, q, 10)
        matches += int(np.array_equal(ids, want_ids))
        np.testing.assert_allclose(np.sort(scores)[::-1], scores)  # best first
        np.testing.assert_allclose(scores, want_scores, atol=2e-3)
    assert matches / n >= 0.99


def test_one_vector_returns_one_pair_and_dtypes_convert_once(client, vectors):
    ids, scores = client.search(vectors[3], k=50, top=5)
    assert ids[0] == 3  # a document is its own nearest neighbour
    as64, _ = client.search(vectors[3].astype(np.float64), k=50, top=5)
    strided = np.asfortranarray(vectors[:4])[:, :]  # non-contiguous rows: converted once
    assert not strided.flags["C_CONTIGUOUS"]
    batch = client.search(strided, k=50, top=5)
    np.testing.assert_array_equal(as64, ids)
    for row, (batch_ids, _) in enumerate(batch):  # each row as if searched on its own
        np.testing.assert_array_equal(batch_ids, client.search(vectors[row], k=50, top=5)[0])


def test_results_name_their_documents_by_id(client, vectors):
    rows, _ = client.search(vectors[3], k=50, top=5)
    names = client.document_ids(rows)
    assert names[0] == "d3" and names == [f"d{r}" for r in rows]
    assert client.document_ids([10**9]) == [""]  # no such row: nothing, not a guess


def test_bad_inputs_raise_typed_errors(client, vectors):
    with pytest.raises(privsearch.InvalidArgumentError, match="dimension 47"):
        client.search(vectors[0][:47])
    bad = vectors[0].copy()
    bad[5] = np.nan
    with pytest.raises(privsearch.InvalidArgumentError, match="NaN"):
        client.search(bad)
    with pytest.raises(privsearch.InvalidArgumentError, match="real-valued"):
        client.search(vectors[0].astype(np.complex64))
    with pytest.raises(privsearch.InvalidArgumentError, match="real-valued"):
        client.search(np.array(["a"] * DIM))
    with pytest.raises(privsearch.InvalidArgumentError):
        client.search(np.zeros((2, 2, DIM), dtype=np.float32))
    err = pytest.raises(privsearch.Error, client.search, vectors[0][:3]).value
    assert err.code == "INVALID_ARGUMENT" and err.provider_code is None


def test_build_refuses_bad_input(tmp_path, vectors):
    with pytest.raises(privsearch.InvalidArgumentError, match="ids for"):
        privsearch.build_index(tmp_path / "a", vectors, ids=["x"])
    with pytest.raises(privsearch.InvalidArgumentError, match="twice"):
        privsearch.build_index(tmp_path / "b", vectors[:4], ids=["x", "y", "x", "z"])
    with pytest.raises(privsearch.InvalidArgumentError, match="2-D"):
        privsearch.build_index(tmp_path / "c", vectors[0])


def test_private_fetch_returns_the_payload(client):
    assert client.fetch(17) == b"document 17: payload text"
    assert client.fetch_text(17) == "document 17: payload text"


def test_binary_payloads_come_back_byte_for_byte(tmp_path, vectors):
    # Random binary payloads (NUL, invalid UTF-8, empty, the largest that fits) through a real
    # provider process: what fetch returns is the bytes given, never a repr or a decoding.
    rng = np.random.default_rng(99)
    n = 300  # PQ training needs 256 vectors
    payloads = [rng.integers(0, 256, size=int(rng.integers(0, 125)), dtype=np.uint8).tobytes()
                for _ in range(n)]
    payloads[0] = b"\xff\x00"
    payloads[1] = b""
    payloads[2] = bytes(124)  # record_bytes - 4: the largest that fits
    payloads[3] = "caf\u00e9 \u2603"  # str: stored as UTF-8
    out = tmp_path / "bin-index"
    privsearch.build_index(out, vectors[:n], payloads=payloads, dim=32, record_bytes=128,
                           access_private=False)
    with privsearch.Provider(out, threads=1, pir_test_params=True) as p:
        c = p.client(out)
        for doc in [0, 1, 2, 3, 5, 17, 299]:
            want = payloads[doc].encode("utf-8") if isinstance(payloads[doc], str) else payloads[doc]
            got = c.fetch(doc)
            assert isinstance(got, bytes) and got == want, doc
        assert c.fetch_text(3) == "caf\u00e9 \u2603"
    with pytest.raises(privsearch.InvalidArgumentError, match="125 bytes"):
        privsearch.build_index(tmp_path / "big", vectors[:2], payloads=[bytes(125), b""],
                               dim=32, record_bytes=128)
    with pytest.raises(privsearch.InvalidArgumentError, match="bytes or str"):
        privsearch.build_index(tmp_path / "int", vectors[:2], payloads=[1, 2], dim=32)


def test_one_client_shared_by_many_threads(client, vectors):
    # Six threads mixing searches, access-private searches and fetches on one Client (the GIL is
    # released): every call succeeds and gives what the same call gives from one thread. Before
    # the client's calls were serialized in C++ this crashed the interpreter.
    want_ids = {i: client.search(vectors[i], k=50, top=5)[0] for i in range(6)}
    want_private = {i: client.search(vectors[i], k=50, top=5, access_private=True)[0]
                    for i in range(6)}
    errors, done = [], []

    def work(t):
        try:
            for j in range(6):
                i = (t + j) % 6
                if j % 3 == 0:
                    ids, _ = client.search(vectors[i], k=50, top=5)
                    np.testing.assert_array_equal(ids, want_ids[i])
                elif j % 3 == 1:
                    ids, _ = client.search(vectors[i], k=50, top=5, access_private=True)
                    np.testing.assert_array_equal(ids, want_private[i])
                else:
                    assert client.fetch(100 + i) == f"document {100 + i}: payload text".encode()
            done.append(t)
        except Exception as e:  # noqa: BLE001 - reported below with the thread
            errors.append((t, repr(e)))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    assert not errors, errors
    assert sorted(done) == list(range(6))


def test_searches_release_the_gil(client, vectors):
    # Two Python threads searching at once both finish (the GIL is not held while waiting).
    out = []
    threads = [threading.Thread(target=lambda i=i: out.append(client.search(vectors[i], k=50)))
               for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(out) == 2


def test_cli_searches_own_query_vectors(provider, index_dir, vectors, tmp_path):
    q = tmp_path / "q.npy"
    np.save(q, vectors[[5, 9]].astype(np.float64))
    cli = privsearch._privsearch.default_provider_binary.replace("privsearch-provider",
                                                                 "privsearch")
    run = subprocess.run([cli, "search", "--index", str(index_dir), "--port", str(provider.port),
                          "--fingerprint", provider.fingerprint, "--query-vectors", str(q),
                          "--candidates", "100", "--top", "3", "--json"],
                         capture_output=True, text=True, timeout=120, check=True)
    rows = [json.loads(line) for line in run.stdout.splitlines()]
    assert [r["query"] for r in rows] == [0, 1]
    assert [r["ids"][0] for r in rows] == [5, 9]
    np.save(q, vectors[:, :10])
    run = subprocess.run([cli, "search", "--index", str(index_dir), "--port", str(provider.port),
                          "--fingerprint", provider.fingerprint, "--query-vectors", str(q)],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode != 0 and "dimension 10" in run.stderr


def test_a_provider_that_cannot_start_says_why(tmp_path):
    with pytest.raises(privsearch.UnavailableError, match="does not exist"):
        privsearch.Provider(tmp_path / "no-index")


def test_closed_provider_raises_unavailable_and_leaves_no_process(index_dir, vectors):
    with privsearch.Provider(index_dir, threads=1) as p:
        pid = p.pid
        c = p.client(index_dir, deadline_ms=3000)
        ids, _ = c.search(vectors[1], k=50)
        assert ids[0] == 1
    assert not p.running and not process_alive(pid)
    with pytest.raises(privsearch.UnavailableError):
        c.search(vectors[1], k=50)


def test_wrong_fingerprint_is_refused(provider, index_dir):
    with pytest.raises(privsearch.Error):
        privsearch.Client(index_dir, provider.host, provider.port, fingerprint="00" * 32,
                          deadline_ms=3000)


def test_provider_refusals_carry_their_typed_code(index_dir, vectors, tmp_path):
    token = "py-test-token-5b7e0c"
    tokens = tmp_path / "tokens"
    tokens.write_text(f"alice {hashlib.sha256(token.encode()).hexdigest()}\n")
    with privsearch.Provider(index_dir, threads=1,
                             args=["--auth-tokens", str(tokens), "--scores-per-identity", "40"]) as p:  # two searches of K = 20
        with pytest.raises(privsearch.Error):  # no token: UNAUTHENTICATED
            p.client(index_dir, deadline_ms=3000).search(vectors[0], k=20)
        c = p.client(index_dir, token=token)
        c.search(vectors[0], k=20)
        c.search(vectors[1], k=20)
        err = pytest.raises(privsearch.ResourceExhaustedError, c.search, vectors[2], k=20).value
        assert err.provider_code == "QUOTA_EXHAUSTED" and err.code == "RESOURCE_EXHAUSTED"


def _write_collection(col, targets):
    """A BEIR collection of DOCS documents and one query per target document (judged relevant)."""
    (col / "qrels").mkdir(parents=True)
    with open(col / "corpus.jsonl", "w") as f:
        for i in range(DOCS):
            f.write(json.dumps({"_id": f"d{i}", "title": f"doc {i}", "text": "body"}) + "\n")
    with open(col / "queries.jsonl", "w") as f:
        for j in range(len(targets)):
            f.write(json.dumps({"_id": f"q{j}", "text": f"query {j}"}) + "\n")
    with open(col / "qrels" / "test.tsv", "w") as f:
        f.write("query-id\tcorpus-id\tscore\n")
        for j, t in enumerate(targets):
            f.write(f"q{j}\td{t}\t1\n")


def test_cli_evaluates_a_doc_vectors_index_with_query_vectors(vectors, tmp_path):
    # A BEIR collection whose embeddings were "computed elsewhere": documents with vectors, and
    # 30 queries, each a noisy copy of the document judged relevant to it.
    col = tmp_path / "col"
    rng = np.random.default_rng(11)
    targets = rng.choice(DOCS, 30, replace=False)
    _write_collection(col, targets)
    # Unit-norm documents (as most embedding models give): the inner product ranks by angle.
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    np.save(tmp_path / "docs.npy", unit)
    np.save(tmp_path / "queries.npy", unit[targets] + 0.01 * rng.normal(size=(30, DIM)))
    cli = privsearch._privsearch.default_provider_binary.replace("privsearch-provider",
                                                                 "privsearch")
    subprocess.run([cli, "build", "--collection", str(col), "--doc-vectors",
                    str(tmp_path / "docs.npy"), "--dim", "32", "--out", str(tmp_path / "idx")],
                   capture_output=True, check=True, timeout=300)
    with privsearch.Provider(tmp_path / "idx", threads=2, args=["--no-pir"]) as p:
        run = subprocess.run([cli, "search", "--index", str(tmp_path / "idx"), "--port",
                              str(p.port), "--fingerprint", p.fingerprint, "--evaluate", str(col),
                              "--query-vectors", str(tmp_path / "queries.npy"), "--json"],
                             capture_output=True, text=True, timeout=300, check=True)
    report = json.loads(run.stdout)
    assert report["queries"] == 30
    assert report["ndcg@10_encrypted"] > 0.9
    assert abs(report["ndcg@10_encrypted"] - report["ndcg@10_plaintext_rerank"]) < 0.02


def test_access_private_search_agrees_with_the_exact_ranking(index_dir, client, vectors):
    # The index was built with the scoring database (the default): the provider scores whole
    # clusters. Scores are exact integers of 4-bit vectors (exactness: the C++ tests), so the
    # order approximates the exact one: here (d' = 32, 12 topics, m = 2) ~0.58 of the exact
    # top-10 on average.
    overlap = []
    for doc in range(0, DOCS, 20):
        ids, scores = client.search(vectors[doc], k=50, top=10, access_private=True, clusters=2)
        assert len(ids) == 10 and ids.dtype == np.int64
        np.testing.assert_array_equal(scores, np.round(scores))
        assert np.all(np.diff(scores) <= 0)
        want_ids, _ = exact_top(index_dir, client, vectors[doc], 10)
        overlap.append(len(set(ids.tolist()) & set(want_ids.tolist())) / 10)
    assert np.mean(overlap) >= 0.4
    with pytest.raises(privsearch.InvalidArgumentError):
        client.search(vectors[0], access_private=True, clusters=0)


def test_signed_index_versions_are_pinned_and_rollback_is_refused(index_dir, vectors, tmp_path):
    # The operator's tools (keygen-signing, sign) and a client pinning the key: version 2 opens,
    # version 1 is a rollback, another operator's key is refused, all before any search.
    cli = privsearch._privsearch.default_provider_binary.replace("privsearch-provider",
                                                                 "privsearch")
    for name in ("op.key", "other.key"):
        subprocess.run([cli, "keygen-signing", "--out", str(tmp_path / name)],
                       capture_output=True, text=True, timeout=60, check=True)
    assert (tmp_path / "op.key").stat().st_mode & 0o777 == 0o600
    v1, v2 = tmp_path / "v1", tmp_path / "v2"
    shutil.copytree(index_dir, v1)
    shutil.copytree(index_dir, v2)
    subprocess.run([cli, "sign", "--index", str(v1), "--key", str(tmp_path / "op.key")],
                   capture_output=True, text=True, timeout=60, check=True)
    run = subprocess.run([cli, "sign", "--index", str(v2), "--key", str(tmp_path / "op.key"),
                          "--parent", str(v1)], capture_output=True, text=True, timeout=60,
                         check=True)
    assert "sequence 2" in run.stdout
    refused = subprocess.run([cli, "sign", "--index", str(v2), "--key",
                              str(tmp_path / "op.key.pub")], capture_output=True, text=True,
                             timeout=60)
    assert refused.returncode != 0 and "private key" in refused.stderr
    seen = tmp_path / "seen.json"
    with privsearch.Provider(v2, threads=1) as p:
        c = p.client(v2, trust_key=tmp_path / "op.key.pub", seen_versions=seen)
        ids, _ = c.search(vectors[3], k=50)
        assert ids[0] == 3
        with pytest.raises(privsearch.UnauthenticatedError):
            p.client(v2, trust_key=tmp_path / "other.key.pub", seen_versions=tmp_path / "s2.json")
        err = pytest.raises(privsearch.FailedPreconditionError, p.client, v1,
                            trust_key=tmp_path / "op.key.pub", seen_versions=seen).value
        assert "rollback" in str(err)
        with pytest.raises(privsearch.NotFoundError):  # unsigned
            p.client(index_dir, trust_key=tmp_path / "op.key.pub", seen_versions=seen)


def test_ivf_client_fetches_lists_and_matches_the_flat_client(vectors, tmp_path):
    # An index with IVF lists, a thin client copy (client-files), searches probing every list
    # equal the flat client's; wrong choices are typed errors.
    col = tmp_path / "col"
    _write_collection(col, [0])
    np.save(tmp_path / "docs.npy", vectors)
    cli = privsearch._privsearch.default_provider_binary.replace("privsearch-provider",
                                                                 "privsearch")
    subprocess.run([cli, "build", "--collection", str(col), "--doc-vectors",
                    str(tmp_path / "docs.npy"), "--dim", "32", "--out", str(tmp_path / "idx"),
                    "--ivf", "on", "--ivf-lists", "6", "--no-access-private"],
                   capture_output=True, check=True, timeout=300)
    subprocess.run([cli, "client-files", "--index", str(tmp_path / "idx"), "--out",
                    str(tmp_path / "thin")], capture_output=True, check=True, timeout=60)
    assert not (tmp_path / "thin" / "pq.bin").exists()
    with privsearch.Provider(tmp_path / "idx", threads=2, args=["--no-pir"]) as p:
        thin = privsearch.Client(tmp_path / "thin", "127.0.0.1", p.port, fingerprint=p.fingerprint,
                                 list_cache=tmp_path / "cache")
        flat = privsearch.Client(tmp_path / "idx", "127.0.0.1", p.port, fingerprint=p.fingerprint,
                                 candidate_index="flat")
        for row in (3, 250):
            ids_ivf, scores_ivf = thin.search(vectors[row], k=20, nprobe=6)
            ids_flat, scores_flat = flat.search(vectors[row], k=20)
            assert list(ids_ivf) == list(ids_flat)
            assert np.allclose(scores_ivf, scores_flat, atol=1e-3)
        assert any(f.suffix == ".seg" for f in (tmp_path / "cache").iterdir())
        with pytest.raises(privsearch.NotFoundError):
            privsearch.Client(tmp_path / "thin", "127.0.0.1", p.port, fingerprint=p.fingerprint,
                              candidate_index="flat")
        with pytest.raises(privsearch.InvalidArgumentError):
            privsearch.Client(tmp_path / "thin", "127.0.0.1", p.port, fingerprint=p.fingerprint,
                              candidate_index="lists")
        with pytest.raises(privsearch.FailedPreconditionError, match="--pir-lists"):
            privsearch.Client(tmp_path / "thin", "127.0.0.1", p.port, fingerprint=p.fingerprint,
                              private_lists=True, pir_test_params=True)
    # Lists by ZipPIR: the same results, and the provider is asked for no list by name.
    with privsearch.Provider(tmp_path / "idx", threads=2, pir_test_params=True,
                             args=["--no-pir", "--pir-lists"]) as p:
        hidden = privsearch.Client(tmp_path / "thin", "127.0.0.1", p.port,
                                   fingerprint=p.fingerprint, private_lists=True,
                                   pir_test_params=True, list_cache=tmp_path / "cache-private")
        flat = privsearch.Client(tmp_path / "idx", "127.0.0.1", p.port, fingerprint=p.fingerprint,
                                 candidate_index="flat")
        constant = privsearch.Client(tmp_path / "thin", "127.0.0.1", p.port,
                                     fingerprint=p.fingerprint, private_lists=True,
                                     constant_list_fetches=True, pir_test_params=True,
                                     list_cache=tmp_path / "cache-constant")
        for row in (3, 250):
            ids_hidden, _ = hidden.search(vectors[row], k=20, nprobe=6)
            ids_flat, _ = flat.search(vectors[row], k=20)
            assert list(ids_hidden) == list(ids_flat)
            ids_constant, _ = constant.search(vectors[row], k=20, nprobe=6)
            assert list(ids_constant) == list(ids_flat)
