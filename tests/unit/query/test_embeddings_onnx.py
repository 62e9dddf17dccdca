"""The ONNX BERT-style embedders (minilm://, e5-small://, bge-small://): pooling, query and
passage prefixes, pinned hashes, the missing-model message, Protocol conformance, and the
real e5 and bge files that deploy/models/fetch.sh fetches.

The real-file tests skip when the files are absent, except in CI (CI=true), where
scripts/bootstrap has fetched them and their absence is a failure.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from nuggetflow.errors import ConfigError
from nuggetflow.settings import Settings
from query.embeddings import (
    BGE_SMALL,
    E5_SMALL,
    FETCHED_MODELS,
    MINILM,
    Embedder,
    MiniLMEmbedder,
    OnnxBertEmbedder,
    OnnxModel,
    OpenAIEmbedder,
    QueryEmbeddings,
    Vector,
    make_embedder,
    pool,
)

ROOT = Path(__file__).resolve().parents[3]
MODELS = ROOT / "deploy" / "models"


class Recording(OnnxBertEmbedder):
    """The real prefix/batching path with the model replaced: records the texts a batch
    gets and returns one distinct unit vector per text length."""

    def __init__(self, model: OnnxModel, batch_size: int = 64) -> None:
        super().__init__(model, Path("unused.onnx"), Path("unused.json"), batch_size=batch_size)
        self.seen: list[str] = []

    def warm_up(self) -> None:
        self._session = object()

    def _embed_batch(self, texts: Sequence[str]) -> Vector:
        self.seen.extend(texts)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            out[i, len(t) % self.dim] = 1.0
        return out


# --- pooling and prefixes ----------------------------------------------------------------


def test_mean_pooling_averages_only_the_tokens_the_mask_keeps() -> None:
    hidden = np.array([[[1.0, 0.0], [3.0, 2.0], [100.0, 100.0]],
                       [[2.0, 2.0], [4.0, 0.0], [6.0, 4.0]]], dtype=np.float32)
    mask = np.array([[1, 1, 0], [1, 1, 1]], dtype=np.int64)
    assert np.allclose(pool(hidden, mask, "mean"), [[2.0, 1.0], [4.0, 2.0]])


def test_cls_pooling_takes_the_first_token_whatever_the_mask() -> None:
    hidden = np.array([[[1.0, 5.0], [3.0, 2.0], [100.0, 100.0]]], dtype=np.float32)
    mask = np.array([[1, 1, 0]], dtype=np.int64)
    assert np.allclose(pool(hidden, mask, "cls"), [[1.0, 5.0]])


def test_model_choices_follow_the_model_cards() -> None:
    assert (E5_SMALL.pooling, E5_SMALL.query_prefix, E5_SMALL.passage_prefix) == (
        "mean", "query: ", "passage: ")
    assert (BGE_SMALL.pooling, BGE_SMALL.passage_prefix) == ("cls", "")
    assert BGE_SMALL.query_prefix == "Represent this sentence for searching relevant passages: "
    assert (MINILM.pooling, MINILM.query_prefix, MINILM.passage_prefix) == ("mean", "", "")
    assert {m.dim for m in (MINILM, *FETCHED_MODELS)} == {384}


@pytest.mark.parametrize(("model", "query", "passage"), [
    (E5_SMALL, "query: ", "passage: "),
    (BGE_SMALL, "Represent this sentence for searching relevant passages: ", ""),
    (MINILM, "", ""),
])
def test_queries_and_passages_get_the_models_prefixes(model: OnnxModel, query: str,
                                                      passage: str) -> None:
    emb = Recording(model)
    emb.embed(["reset a password"])
    emb.embed_queries(["who resets passwords"])
    assert emb.seen == [passage + "reset a password", query + "who resets passwords"]


def test_batches_keep_the_input_order() -> None:
    emb = Recording(E5_SMALL, batch_size=2)
    texts = ["ccccc", "a", "bbb", "dddddddd", "ee"]
    out = emb.embed(texts)
    assert out.shape == (5, 384)
    assert [int(np.argmax(row)) for row in out] == [len("passage: " + t) for t in texts]
    assert emb.embed_queries([]).shape == (0, 384)


# --- hashes, missing files, settings ------------------------------------------------------


def test_a_model_file_with_the_wrong_hash_is_an_error(tmp_path: Path) -> None:
    for m in FETCHED_MODELS:
        (tmp_path / m.model_file).write_bytes(b"not a model")
        (tmp_path / m.tokenizer_file).write_text("{}")
        with pytest.raises(ConfigError) as err:
            OnnxBertEmbedder.from_dir(m, tmp_path).warm_up()
        assert "sha256" in str(err.value) and m.model_file in str(err.value)
        assert err.value.field == "NUGGETFLOW_EMBEDDER"


@pytest.mark.parametrize("scheme", ["e5-small", "bge-small"])
def test_a_missing_model_says_which_command_fetches_it(tmp_path: Path, scheme: str) -> None:
    settings = Settings.from_env({"NUGGETFLOW_EMBEDDER": f"{scheme}://",
                                  "NUGGETFLOW_MODELS_DIR": str(tmp_path / "none")})
    emb = make_embedder(settings)  # loads lazily: no error yet
    with pytest.raises(ConfigError) as err:
        emb.embed(["x"])
    msg = str(err.value)
    assert "deploy/models/fetch.sh" in msg and str(tmp_path / "none") in msg
    assert err.value.field == "NUGGETFLOW_EMBEDDER"


def test_make_embedder_picks_by_scheme_and_checks_the_dimension(tmp_path: Path) -> None:
    def make(url: str, **env: str) -> Embedder:
        return make_embedder(Settings.from_env({"NUGGETFLOW_EMBEDDER": url,
                                                "NUGGETFLOW_MODELS_DIR": str(tmp_path),
                                                **env}))

    assert isinstance(make("minilm://"), MiniLMEmbedder)
    for url, model in (("e5-small://", E5_SMALL), ("bge-small://", BGE_SMALL)):
        emb = make(url)
        assert isinstance(emb, OnnxBertEmbedder) and emb.model is model
        with pytest.raises(ConfigError) as err:
            make(url, NUGGETFLOW_EMBEDDING_DIM="768")
        assert err.value.field == "NUGGETFLOW_EMBEDDING_DIM"
    assert Settings.from_env({}).embedder == "minilm://"  # MiniLM stays the default


def test_every_embedder_conforms_to_the_protocol() -> None:
    for emb in (MiniLMEmbedder(), OnnxBertEmbedder.from_dir(E5_SMALL, Path("x")),
                OnnxBertEmbedder.from_dir(BGE_SMALL, Path("x")), OpenAIEmbedder("m", 4)):
        assert isinstance(emb, Embedder)


def test_fetch_script_pins_the_hashes_the_code_pins() -> None:
    sums: dict[str, str] = {}
    for line in (MODELS / "SHA256SUMS").read_text().splitlines():
        if line.strip():
            digest, name = line.split()
            sums[name] = digest
    want = {}
    for m in FETCHED_MODELS:
        want[m.model_file] = m.model_sha256
        want[m.tokenizer_file] = m.tokenizer_sha256
    assert sums == want
    pom = (MODELS / "pom.xml").read_text()
    version = re.search(r"<langchain4j.embeddings.version>(.+?)<", pom)
    assert version is not None
    for m in FETCHED_MODELS:
        group, artifact, v = m.artifact.split(":")
        assert group == "dev.langchain4j"
        assert v == version.group(1) and f"<artifactId>{artifact}</artifactId>" in pom


async def test_query_embeddings_embed_queries_not_passages() -> None:
    emb = Recording(E5_SMALL)
    q = QueryEmbeddings(emb, cache_size=8)
    vec = await q.embed("reset password")
    assert emb.seen == ["query: reset password"]
    assert int(np.argmax(vec)) == len("query: reset password")


# --- the real files ----------------------------------------------------------------------


def _models_dir() -> Path:
    return Path(os.environ.get("NUGGETFLOW_MODELS_DIR") or ROOT / "var" / "models")


@pytest.fixture(scope="module", params=["e5-small", "bge-small"])
def real(request: pytest.FixtureRequest) -> OnnxBertEmbedder:
    model = {"e5-small": E5_SMALL, "bge-small": BGE_SMALL}[request.param]
    emb = OnnxBertEmbedder.from_dir(model, _models_dir(), threads=1)
    if not (_models_dir() / model.model_file).is_file():
        why = (f"{model.model_file} is not in {_models_dir()} "
               f"(deploy/models/fetch.sh fetches it)")
        if os.environ.get("CI", "").lower() in ("true", "1"):
            pytest.fail(f"{why}; CI must have it (scripts/bootstrap)")
        pytest.skip(why)
    emb.warm_up()
    return emb


def test_real_model_vectors_are_normalized_and_semantic(real: OnnxBertEmbedder) -> None:
    passages = real.embed(["Only the Workspace Owner can reset another user's password.",
                           "Change the desktop wallpaper from Settings > Appearance.",
                           "PostgreSQL VACUUM reclaims storage occupied by dead tuples."])
    queries = real.embed_queries(["Which role may reset a teammate's password?",
                                  "how do I get a different background picture",
                                  "free disk space taken by deleted rows in postgres"])
    assert passages.shape == queries.shape == (3, 384)
    assert passages.dtype == np.float32
    assert np.allclose(np.linalg.norm(passages, axis=1), 1.0, atol=1e-5)
    assert np.allclose(np.linalg.norm(queries, axis=1), 1.0, atol=1e-5)
    sims = queries @ passages.T
    assert [int(np.argmax(row)) for row in sims] == [0, 1, 2]
    assert all(sims[i, i] > np.delete(sims[i], i).max() + 0.05 for i in range(3))


def test_real_model_query_prefix_changes_the_vector(real: OnnxBertEmbedder) -> None:
    text = "reset another user's password"
    assert float(real.embed([text])[0] @ real.embed_queries([text])[0]) < 0.999
    # the same text alone or in a batch with a longer one: padding is masked, but these
    # models quantize activations per batch, so the vectors agree closely, not exactly
    alone = real.embed([text])[0]
    batched = real.embed([text, "a much longer passage " * 20])[0]
    assert float(alone @ batched) > 0.99


def test_real_tokenizer_with_the_wrong_hash_is_an_error(real: OnnxBertEmbedder,
                                                         tmp_path: Path) -> None:
    m = real.model
    (tmp_path / m.model_file).symlink_to(_models_dir() / m.model_file)
    (tmp_path / m.tokenizer_file).write_text("{}")
    with pytest.raises(ConfigError) as err:
        OnnxBertEmbedder.from_dir(m, tmp_path).warm_up()
    assert "tokenizer" in str(err.value) and "sha256" in str(err.value)
