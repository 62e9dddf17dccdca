"""Topic names with the deployment prefix, and the streaming settings."""

from __future__ import annotations

import pytest

from nuggetflow.errors import ConfigError
from nuggetflow.settings import Settings
from stream.topics import TopicKind, Topics, bootstrap_servers, group_id


def test_prefix_applies_to_every_topic_and_the_group() -> None:
    s = Settings.from_env({"NUGGETFLOW_STREAM_PREFIX": "prod.",
                           "NUGGETFLOW_STREAM_APP_ID": "nf"})
    topics = Topics.from_settings(s)
    assert topics.all() == ["prod.feedback.events", "prod.feedback.corrections",
                            "prod.nuggets.candidates", "prod.nuggets.reviews",
                            "prod.feedback.dead-letter", "prod.corpus.changes"]
    assert topics.kind_of("prod.nuggets.reviews") is TopicKind.REVIEWS
    with pytest.raises(ValueError):
        topics.kind_of("nuggets.reviews")
    assert group_id(s) == "prod.nf"


def test_defaults() -> None:
    s = Settings.from_env({})
    assert Topics.from_settings(s).name(TopicKind.EVENTS) == "feedback.events"
    assert bootstrap_servers(s) == ["127.0.0.1:19092"]
    assert s.policy_for("anyone") == "manual"


def test_per_tenant_review_policy() -> None:
    s = Settings.from_env({"NUGGETFLOW_REVIEW_POLICY": "auto",
                           "NUGGETFLOW_REVIEW_POLICY_TENANTS": "acme=manual, globex=auto"})
    assert (s.policy_for("acme"), s.policy_for("globex"), s.policy_for("x")) == (
        "manual", "auto", "auto")


@pytest.mark.parametrize("var, value", [
    ("NUGGETFLOW_KAFKA_BOOTSTRAP", "localhost"),
    ("NUGGETFLOW_KAFKA_BOOTSTRAP", "a:1,b:x"),
    ("NUGGETFLOW_STREAM_PREFIX", "bad prefix"),
    ("NUGGETFLOW_STREAM_APP_ID", ""),
    ("NUGGETFLOW_STREAM_PARTITIONS", "0"),
    ("NUGGETFLOW_STREAM_OPTIMIZE_CONCURRENCY", "0"),
    ("NUGGETFLOW_STREAM_RETRY_INITIAL_SECONDS", "0"),
    ("NUGGETFLOW_STREAM_RETRY_MAX_SECONDS", "0.5"),  # below the initial 1.0
    ("NUGGETFLOW_STREAM_LAG_INTERVAL_SECONDS", "-1"),
    ("NUGGETFLOW_REVIEW_POLICY", "sometimes"),
    ("NUGGETFLOW_REVIEW_POLICY_TENANTS", "acme"),
    ("NUGGETFLOW_REVIEW_POLICY_TENANTS", "acme=yes"),
    ("NUGGETFLOW_STREAM_AGENTS", ""),
    ("NUGGETFLOW_STREAM_AGENTS", "actionability,ranker"),
    ("NUGGETFLOW_STREAM_MIN_INSYNC_REPLICAS", "0"),
    ("NUGGETFLOW_STREAM_MIN_INSYNC_REPLICAS", "2"),  # above the replication factor 1
])
def test_bad_streaming_settings_are_named(var: str, value: str) -> None:
    with pytest.raises(ConfigError) as err:
        Settings.from_env({var: value})
    assert err.value.field == var


def test_cluster_settings_reach_the_topics_and_the_producer() -> None:
    """Topics are created with min.insync.replicas; the worker's Faust producer is
    idempotent with acks=all (Faust's own is idempotent only in transactions)."""
    from stream.app import create_app
    from stream.topics import topic_configs
    from stream.transport import IdempotentProducer

    settings = Settings.from_env({"NUGGETFLOW_STREAM_REPLICATION_FACTOR": "3",
                                  "NUGGETFLOW_STREAM_MIN_INSYNC_REPLICAS": "2"})
    assert topic_configs(settings) == {"min.insync.replicas": "2"}
    app = create_app(settings)
    producer = app.producer
    assert isinstance(producer, IdempotentProducer)
    extra = producer._settings_extra()
    assert (extra["acks"], extra["enable_idempotence"]) == ("all", True)
    assert app.conf.topic_replication_factor == 3
