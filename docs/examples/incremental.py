"""Show text while it streams, reading only what is new (one offset per message)."""

import tokasm


def stream_to_screen(events, render):
    assembler = tokasm.TokenAssembler()
    offsets = {}  # message id -> how much of its text has been shown
    for event in events:
        assembler.apply(event)
        message_id = event["id"]
        new_text = assembler.read_since(message_id, offsets.get(message_id, 0))
        offsets[message_id] = offsets.get(message_id, 0) + len(new_text)
        render(message_id, new_text)
