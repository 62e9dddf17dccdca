"""nuggetflow-client: talk to a nuggetflow deployment without installing the server.

- :class:`QueryClient` / :class:`AsyncQueryClient`: the gRPC query service (retrieve,
  report citations, get a nugget, list versions and review candidates, review, edit with
  the factual guard, a nugget's governance neighbourhood, usage counts, review flags (list,
  dismiss), who am I);
- :func:`feedback_event`, :class:`FeedbackPublisher` and :func:`publish_feedback`: user
  feedback to Kafka's ``feedback.events`` (publishing needs the ``kafka`` extra);
- :mod:`nuggetflow_client.errors`: what a failed call raises;
- :mod:`nuggetflow_client.v1`: the generated protobuf and gRPC code (the server's
  ``nuggetflow.v1``, same wire format).

Depends on grpcio and protobuf only (and aiokafka with the ``kafka`` extra).
"""

from nuggetflow_client.client import (
    AsyncQueryClient,
    Citations,
    Edit,
    Hit,
    Identity,
    Neighbour,
    Neighbourhood,
    Nugget,
    NuggetPage,
    QueryClient,
    Retrieval,
    ReviewFlag,
    Scores,
    Usage,
)
from nuggetflow_client.errors import (
    Aborted,
    ClientError,
    DeadlineExceeded,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    ResourceExhausted,
    Unauthenticated,
    Unavailable,
)
from nuggetflow_client.feedback import (
    FeedbackEvent,
    FeedbackPublisher,
    feedback_event,
    publish_feedback,
)

__version__ = "0.1.0"

__all__ = [
    "Aborted",
    "AsyncQueryClient",
    "Citations",
    "ClientError",
    "DeadlineExceeded",
    "Edit",
    "FeedbackEvent",
    "FeedbackPublisher",
    "Hit",
    "Identity",
    "InvalidArgument",
    "Neighbour",
    "Neighbourhood",
    "NotFound",
    "Nugget",
    "NuggetPage",
    "PermissionDenied",
    "QueryClient",
    "ResourceExhausted",
    "Retrieval",
    "ReviewFlag",
    "Scores",
    "Unauthenticated",
    "Unavailable",
    "Usage",
    "__version__",
    "feedback_event",
    "publish_feedback",
]
