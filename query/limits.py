"""Size limits of query service requests, checked in one place for every RPC.

:class:`RequestLimits` walks the fields of a decoded request by its descriptor, so every
string field of every request (and any field added later) is bounded: id-like fields by
``NUGGETFLOW_GRPC_MAX_ID_CHARS``, the Retrieve query and an edited nugget body by
``NUGGETFLOW_GRPC_MAX_QUERY_CHARS``, free text (a reason, an edited title or fact, a
listing's words) by ``NUGGETFLOW_GRPC_MAX_TEXT_CHARS``, page tokens by twice the id limit, and
every repeated field by ``NUGGETFLOW_GRPC_MAX_LIST_ITEMS`` values. Errors name the field
and its limit, never the value, so an error or a log line never echoes unbounded input.
"""

from __future__ import annotations

from dataclasses import dataclass

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from nuggetflow.errors import ValidationError
from nuggetflow.settings import Settings

# "<message>.<field>" of the string fields that are not ids.
QUERY_FIELDS = frozenset({"RetrieveRequest.query", "EditNuggetRequest.body"})
TEXT_FIELDS = frozenset({"ReviewRequest.reason", "EditNuggetRequest.reason",
                         "EditNuggetRequest.title", "FactTriple.subject", "FactTriple.object",
                         "ListCandidatesRequest.query"})
TOKEN_FIELDS = frozenset({"ListVersionsRequest.page_token",
                          "ListCandidatesRequest.page_token"})
# A probe session's candidate texts: as long as a query may be.
CANDIDATE_FIELDS = frozenset({"ProbeCandidate.title", "ProbeCandidate.body",
                              "ProbeCandidate.anchors"})


@dataclass(frozen=True)
class RequestLimits:
    """Largest string fields and repeated fields a request may carry."""

    id_chars: int = 200
    query_chars: int = 2000
    text_chars: int = 1000
    list_items: int = 1000

    @classmethod
    def from_settings(cls, settings: Settings) -> RequestLimits:
        """The limits of ``NUGGETFLOW_GRPC_MAX_*``."""
        return cls(settings.grpc_max_id_chars, settings.grpc_max_query_chars,
                   settings.grpc_max_text_chars, settings.grpc_max_list_items)

    @property
    def token_chars(self) -> int:
        """Longest page token (it encodes a version id)."""
        return 2 * self.id_chars

    def chars_for(self, message: str, field: str) -> int:
        """The character limit of the string field ``field`` of message type ``message``."""
        name = f"{message}.{field}"
        if name in QUERY_FIELDS or name in CANDIDATE_FIELDS:
            return self.query_chars
        if name in TEXT_FIELDS:
            return self.text_chars
        if name in TOKEN_FIELDS:
            return self.token_chars
        return self.id_chars

    def check(self, request: Message) -> None:
        """ValidationError naming the first field over its limit (the value is never shown).

        Nested messages are checked too (field names joined with dots).
        """
        self._check(request, "")

    def _check(self, message: Message, prefix: str) -> None:
        for field in message.DESCRIPTOR.fields:
            name = prefix + field.name
            value = getattr(message, field.name)
            if field.is_repeated:
                if len(value) > self.list_items:
                    raise ValidationError(f"more than {self.list_items} values", field=name)
                items = list(value)
            else:
                items = [value]
            if field.type == FieldDescriptor.TYPE_STRING:
                limit = self.chars_for(message.DESCRIPTOR.name, field.name)
                for i, item in enumerate(items):
                    if len(item) > limit:
                        where = f"value #{i + 1} is " if field.is_repeated else ""
                        raise ValidationError(f"{where}longer than {limit} characters",
                                              field=name)
            elif field.type == FieldDescriptor.TYPE_MESSAGE:
                for item in items:
                    self._check(item, name + ".")
