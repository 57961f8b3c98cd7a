"""privsearch quick start: your vectors in, private results out.

Builds an index from embeddings (random here; yours would come from sentence-transformers, e5,
BGE or an API), starts the provider on loopback, and searches privately: the provider sees the
candidate IDs, never the query, the scores or the ranking; the fetch hides which document."""
import tempfile

import numpy as np

import privsearch

rng = np.random.default_rng(0)
docs = rng.normal(size=(2000, 64)).astype(np.float32)  # one embedding per document
texts = [f"document number {i}" for i in range(len(docs))]

with tempfile.TemporaryDirectory() as work:
    info = privsearch.build_index(f"{work}/index", docs, payloads=texts, dim=64)
    print(f"index {info['version'][:12]}: {info['documents']} documents, d' = {info['dim']}")
    with privsearch.Provider(f"{work}/index") as provider:
        client = provider.client()
        query = docs[42] + 0.1 * rng.normal(size=64)  # a query near document 42
        ids, scores = client.search(query, k=100, top=5)
        print("top 5:", list(zip(ids.tolist(), np.round(scores, 3).tolist())))
        assert ids[0] == 42
        print("fetched privately:", client.fetch_text(int(ids[0])))
