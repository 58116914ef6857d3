"""The same text stream through what people use today, beside tokasm's backends.

    nox -s peers            # installs the three libraries, then runs this
    python benchmarks/peers.py [--sizes 1k,4k,16k] [--scenario NAME ...]

Each library is wrapped as an assembler, so the shared scenarios and the
sweep of ``tokasm bench`` drive it like any backend. Every ``apply`` turns
the tokasm event into that library's wire event (a decoded-JSON dict) and
hands it to the library's own accumulation:

- openai-python: ``ChatCompletionStreamState.handle_chunk`` on a
  ``ChatCompletionChunk`` built as the SDK's stream builds it (``construct_type``);
- anthropic: ``accumulate_event`` on a ``content_block_delta`` event;
- langchain-core: ``AIMessageChunk(content=delta)`` added to the running chunk.

Those libraries also build typed event objects and track far more than text
(roles, tool calls, usage, parsing), which is part of what they cost per event;
tokasm's assemblers only assemble text. The comparison shows what streaming
text costs through each, not which library is better.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any, cast

from tokasm.bench import (
    BenchTarget,
    SweepSettings,
    bundled_targets,
    python_target,
    render_table,
    run_sweep,
)
from tokasm.bench.scenarios import SCENARIOS
from tokasm.cli.options import positive_seconds, size_list
from tokasm.errors import TargetError
from tokasm.implementations import DEFAULT_BACKEND

if TYPE_CHECKING:
    from collections.abc import Callable

    from tokasm.implementations import Event

__all__ = ["PEERS", "main"]

DISCLAIMER = (
    "The peers also build typed event objects (from the decoded JSON, as their SDK streams "
    "do) and keep more than text (roles, tool calls, usage); their cost per event includes "
    "that. tokasm's backends assemble text only."
)


class _Peer:
    """An assembler over one library's per-message state; ``_start``/``_add``/``_text`` vary."""

    def __init__(self) -> None:
        self._open: dict[str, Any] = {}
        self._done: dict[str, str] = {}

    def _start(self) -> Any:
        raise NotImplementedError

    def _add(self, state: Any, delta: str) -> Any:
        raise NotImplementedError

    def _text(self, state: Any) -> str:
        raise NotImplementedError

    def apply(self, event: Event) -> str | None:
        message_id = event["id"]
        if message_id in self._done:
            return self._done[message_id] if event.get("final", False) else None
        state = self._open.get(message_id)
        if state is None:
            state = self._open[message_id] = self._start()
        if "delta" in event:
            self._open[message_id] = state = self._add(state, event["delta"])
        if not event.get("final", False):
            return None
        text = self._done[message_id] = self._text(self._open.pop(message_id))
        return text

    def get(self, message_id: str) -> str | None:
        if message_id in self._done:
            return self._done[message_id]
        state = self._open.get(message_id)
        return None if state is None else self._text(state)


class OpenAIPeer(_Peer):
    """openai-python's ``ChatCompletionStreamState``, one per message."""

    def __init__(self) -> None:
        super().__init__()
        from openai._models import construct_type
        from openai.lib.streaming.chat import ChatCompletionStreamState
        from openai.types.chat import ChatCompletionChunk

        self._state_class = ChatCompletionStreamState
        self._construct = construct_type
        self._chunk_type = ChatCompletionChunk

    def _chunk(self, data: dict[str, object]) -> Any:
        """As the SDK's stream turns each decoded SSE payload into a typed chunk."""
        return self._construct(type_=self._chunk_type, value=data)

    def _wire(self, delta: dict[str, str]) -> dict[str, object]:
        return {
            "id": "chatcmpl-bench",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "bench",
            "choices": [{"index": 0, "delta": delta, "finish_reason": None}],
        }

    def _start(self) -> Any:
        state = self._state_class()
        state.handle_chunk(self._chunk(self._wire({"role": "assistant", "content": ""})))
        return state

    def _add(self, state: Any, delta: str) -> Any:
        state.handle_chunk(self._chunk(self._wire({"content": delta})))
        return state

    def _text(self, state: Any) -> str:
        return state.current_completion_snapshot.choices[0].message.content or ""


class AnthropicPeer(_Peer):
    """anthropic's ``accumulate_event``: a message snapshot, ``text +=`` per delta."""

    def __init__(self) -> None:
        super().__init__()
        from anthropic.lib.streaming._messages import accumulate_event

        self._accumulate = accumulate_event

    def _event(self, snapshot: Any, event: dict[str, object]) -> Any:
        # A dict event is typed by the SDK itself (construct_type_unchecked), as its stream does.
        return self._accumulate(event=cast("Any", event), current_snapshot=snapshot, json_bufs={})

    def _start(self) -> Any:
        message: dict[str, object] = {
            "id": "msg_bench",
            "type": "message",
            "role": "assistant",
            "content": [],
            "model": "bench",
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 0, "output_tokens": 0},
        }
        snapshot = self._event(None, {"type": "message_start", "message": message})
        block = {"type": "text", "text": ""}
        return self._event(
            snapshot, {"type": "content_block_start", "index": 0, "content_block": block}
        )

    def _add(self, state: Any, delta: str) -> Any:
        text_delta = {"type": "text_delta", "text": delta}
        return self._event(state, {"type": "content_block_delta", "index": 0, "delta": text_delta})

    def _text(self, state: Any) -> str:
        return str(state.content[0].text)


class LangChainPeer(_Peer):
    """langchain-core: ``AIMessageChunk`` objects added together."""

    def __init__(self) -> None:
        super().__init__()
        from langchain_core.messages import AIMessageChunk

        self._chunk_class = AIMessageChunk

    def _start(self) -> Any:
        return self._chunk_class(content="")

    def _add(self, state: Any, delta: str) -> Any:
        return state + self._chunk_class(content=delta)

    def _text(self, state: Any) -> str:
        return str(state.content)


#: Name -> peer class; each needs its library installed (``nox -s peers`` does it).
PEERS: dict[str, Callable[[], _Peer]] = {
    "openai ChatCompletionStreamState": OpenAIPeer,
    "anthropic accumulate_event": AnthropicPeer,
    "langchain-core AIMessageChunk +": LangChainPeer,
}


def _peer_targets() -> list[BenchTarget]:
    bench_targets = []
    for name, factory in PEERS.items():
        try:
            bench_targets.append(python_target(name, factory))
        except TargetError as error:  # its library is not installed
            print(f"peers: skipping {name}: {error} (nox -s peers installs it)", file=sys.stderr)
    return bench_targets


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes",
        type=size_list,
        default=(1_000, 4_000, 16_000, 64_000),
        help="stream sizes in deltas (default 1k,4k,16k,64k)",
    )
    parser.add_argument(
        "--scenario",
        action="append",
        choices=list(SCENARIOS),
        default=[],
        help="scenarios to run (default stream_then_finalize)",
    )
    parser.add_argument(
        "--budget", type=positive_seconds, default=5.0, help="seconds per run at most"
    )
    args = parser.parse_args(argv)
    peers = _peer_targets()
    if not peers:
        print("peers: none of the libraries is installed; run `nox -s peers`", file=sys.stderr)
        return 2
    settings = SweepSettings(sizes=args.sizes, repeats=3, budget=args.budget, batch=0.05)
    scenarios = [SCENARIOS[name] for name in args.scenario or ["stream_then_finalize"]]
    results = run_sweep(scenarios, [*bundled_targets(), *peers], settings)
    print(DISCLAIMER)
    print()
    print(render_table(results, settings, DEFAULT_BACKEND))
    return 1 if any(series.error for series in results) else 0


if __name__ == "__main__":
    sys.exit(main())
