"""A user's assembler with one subtle bug: it joins ids case-insensitively."""


class MyAssembler:
    def __init__(self):
        self._parts = {}
        self._done = {}

    def apply(self, event):
        key = event["id"].lower()  # the bug
        if key in self._done:
            return self._done[key] if event.get("final") else None
        parts = self._parts.setdefault(key, [])
        if "delta" in event:
            parts.append(event["delta"])
        if event.get("final"):
            self._done[key] = "".join(self._parts.pop(key))
            return self._done[key]
        return None

    def get(self, message_id):
        key = message_id.lower()
        if key in self._done:
            return self._done[key]
        parts = self._parts.get(key)
        return None if parts is None else "".join(parts)
