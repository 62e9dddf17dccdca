"""Topic names (with the deployment prefix) and topic creation.

Every topic is keyed by tenant, so one tenant's records stay in one partition, in order.

========================  =================================================================
topic                     value
========================  =================================================================
feedback.events           FeedbackEvent: protobuf binary or the proto's canonical JSON
feedback.corrections      actionable events with their extraction (JSON, ``stream.records``)
nuggets.candidates        candidate nuggets, ``nuggetflow.v1.Nugget`` protobuf binary
nuggets.reviews           review actions (JSON ``ReviewEvent`` or ``ReviewRequest`` binary)
feedback.dead-letter      the original bytes of a record that failed, reason in headers
corpus.changes            what a corpus write stored (JSON ``query.corpus.CorpusChange``)
========================  =================================================================
"""

from __future__ import annotations

import enum
import ssl
from dataclasses import dataclass
from typing import Any

from nuggetflow.errors import BackendUnavailableError
from nuggetflow.logging import get_logger
from nuggetflow.settings import Settings

log = get_logger(__name__)


class TopicKind(enum.StrEnum):
    """The logical topics; the value is the name without the deployment prefix."""

    EVENTS = "feedback.events"
    CORRECTIONS = "feedback.corrections"
    CANDIDATES = "nuggets.candidates"
    REVIEWS = "nuggets.reviews"
    DEAD_LETTER = "feedback.dead-letter"
    CORPUS_CHANGES = "corpus.changes"


#: Each agent and the topic it consumes (the Faust app and the embedded runner both
#: route by this).
AGENT_SOURCES: dict[str, TopicKind] = {
    "actionability": TopicKind.EVENTS, "optimize": TopicKind.CORRECTIONS,
    "publish": TopicKind.CANDIDATES, "review": TopicKind.REVIEWS,
    "reprobe": TopicKind.CORPUS_CHANGES}


@dataclass(frozen=True)
class Topics:
    """Real topic names for one deployment prefix."""

    prefix: str = ""

    def name(self, kind: TopicKind) -> str:
        """The Kafka topic name of a logical topic."""
        return f"{self.prefix}{kind.value}"

    def kind_of(self, name: str) -> TopicKind:
        """The logical topic of a Kafka topic name (ValueError if it is not one of ours)."""
        for kind in TopicKind:
            if self.name(kind) == name:
                return kind
        raise ValueError(f"not a nuggetflow topic: {name!r}")

    def all(self) -> list[str]:
        """Every topic name, in flow order."""
        return [self.name(k) for k in TopicKind]

    @classmethod
    def from_settings(cls, settings: Settings) -> Topics:
        """The topics of the configured deployment prefix."""
        return cls(settings.stream_prefix)


def group_id(settings: Settings) -> str:
    """The consumer group (and Faust app id) of the configured deployment."""
    return f"{settings.stream_prefix}{settings.stream_app_id}"


def bootstrap_servers(settings: Settings) -> list[str]:
    """``host:port`` entries of NUGGETFLOW_KAFKA_BOOTSTRAP."""
    return [s.strip() for s in settings.kafka_bootstrap.split(",") if s.strip()]


def _ssl_context(settings: Settings) -> ssl.SSLContext:
    """TLS to the brokers: the system's CAs, or NUGGETFLOW_KAFKA_SSL_CA_FILE's."""
    return ssl.create_default_context(cafile=settings.kafka_ssl_ca_file or None)


def kafka_client_options(settings: Settings) -> dict[str, Any]:
    """Keyword arguments for every aiokafka client (producer, consumer, admin): the
    security protocol and, with SASL_*, the mechanism, user name and password
    (NUGGETFLOW_KAFKA_SECURITY_PROTOCOL, _SASL_MECHANISM, _SASL_USERNAME,
    _SASL_PASSWORD_FILE), with SSL/SASL_SSL a TLS context."""
    protocol = settings.kafka_security_protocol
    options: dict[str, Any] = {"security_protocol": protocol}
    if protocol in ("SSL", "SASL_SSL"):
        options["ssl_context"] = _ssl_context(settings)
    if protocol.startswith("SASL_"):
        options.update(sasl_mechanism=settings.kafka_sasl_mechanism,
                       sasl_plain_username=settings.kafka_sasl_username,
                       sasl_plain_password=settings.kafka_sasl_password_value())
    return options


def faust_credentials(settings: Settings) -> Any:
    """The same security as Faust's ``broker_credentials`` (None for PLAINTEXT)."""
    import faust

    protocol = settings.kafka_security_protocol
    if protocol == "PLAINTEXT":
        return None
    if protocol == "SSL":
        return faust.SSLCredentials(_ssl_context(settings))
    return faust.SASLCredentials(
        username=settings.kafka_sasl_username,
        password=settings.kafka_sasl_password_value(),
        mechanism=settings.kafka_sasl_mechanism,
        ssl_context=_ssl_context(settings) if protocol == "SASL_SSL" else None)


def topic_configs(settings: Settings) -> dict[str, str]:
    """Per-topic configuration of every topic the worker creates."""
    return {"min.insync.replicas": str(settings.stream_min_insync_replicas)}


async def ensure_topics(settings: Settings, names: list[str] | None = None) -> list[str]:
    """Create the missing topics (every one of them: events, corrections, candidates,
    reviews, dead letters) with the configured partitions, replication factor and
    ``min.insync.replicas``; returns those created.

    Raises BackendUnavailableError when the cluster cannot be reached.
    """
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic
    from aiokafka.errors import KafkaConnectionError, KafkaError, TopicAlreadyExistsError

    wanted = names if names is not None else Topics.from_settings(settings).all()
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap_servers(settings),
                                request_timeout_ms=15000, **kafka_client_options(settings))
    try:
        await admin.start()
    except KafkaConnectionError as exc:
        raise BackendUnavailableError(f"Kafka at {settings.kafka_bootstrap} cannot be "
                                      f"reached: {exc}", field="NUGGETFLOW_KAFKA_BOOTSTRAP"
                                      ) from exc
    try:
        existing = set(await admin.list_topics())
        missing = [n for n in wanted if n not in existing]
        if missing:
            response = await admin.create_topics([
                NewTopic(n, num_partitions=settings.stream_partitions,
                         replication_factor=settings.stream_replication_factor,
                         topic_configs=topic_configs(settings))
                for n in missing])
            for topic, code, *rest in response.topic_errors:
                # Already there: created meanwhile by another worker or auto-creation.
                if code not in (0, TopicAlreadyExistsError.errno):
                    raise BackendUnavailableError(
                        f"cannot create topic {topic}: error {code} {rest[0] if rest else ''}",
                        field="NUGGETFLOW_KAFKA_BOOTSTRAP")
            log.info("topics created", topics=",".join(missing),
                     partitions=settings.stream_partitions)
        return missing
    except KafkaError as exc:
        raise BackendUnavailableError(f"cannot create topics: {exc}",
                                      field="NUGGETFLOW_KAFKA_BOOTSTRAP") from exc
    finally:
        await admin.close()
