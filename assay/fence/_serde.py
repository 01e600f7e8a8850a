"""How the control plane's saver stores a checkpoint's values: LangGraph's
``JsonPlusSerializer``, reviving by its allowlist only the records earlier versions
stored as such (a checkpoint holds plain JSON now), and reporting a value it cannot
decode as :class:`~assay.errors.UnreadableCheckpoint`."""

from __future__ import annotations

from typing import Any

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from assay.errors import UnreadableCheckpoint

__all__ = ["checkpoint_serializer"]


class _Serializer(JsonPlusSerializer):
    """LangGraph's serializer, with a stored value it cannot decode reported as
    :class:`~assay.errors.UnreadableCheckpoint` instead of the decoder's error."""

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        try:
            return super().loads_typed(data)
        except Exception as exc:  # any decoder's error: the stored bytes are unreadable
            kind = data[0] if data else "?"
            raise UnreadableCheckpoint(
                f"a stored checkpoint value ({kind}) cannot be decoded: {type(exc).__name__}: {exc}"
            ) from exc


def checkpoint_serializer() -> JsonPlusSerializer:
    """A serializer that revives assay's own result records and nothing unexpected."""
    from assay.contract import Claim, Proposition, PropositionVerdict, Unsupported
    from assay.fence._result import ActionRecord, PendingGrant, RoundReasons, RunResult

    return _Serializer(
        allowed_msgpack_modules=[
            RunResult,
            ActionRecord,
            PendingGrant,
            RoundReasons,
            Unsupported,
            Claim,
            Proposition,
            PropositionVerdict,
        ]
    )
