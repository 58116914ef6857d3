// JavaScript assemblers for tests/test_node_route.py: broken ones, each wrong in one rule,
// that the JS routes must fail, and unusual but correct ones that they must pass.
'use strict';

const { TokenAssembler } = require('../../testees/node/token-assembler.js');

/** Breaks APPEND-EXACT: trims the whitespace LLM tokens start and end with. */
class TrimsText extends TokenAssembler {
  apply(event) {
    const text = super.apply(event);
    return text === null ? null : text.trim();
  }

  get(id) {
    const text = super.get(id);
    return text === null ? null : text.trim();
  }
}

/** Breaks INC-READ-SINCE: slices by UTF-16 units, so an emoji counts twice. */
class ReadSinceUtf16 extends TokenAssembler {
  readSince(id, offset) {
    const text = this.get(id);
    return text === null ? null : text.slice(offset);
  }
}

/** Correct, oddly: answers with String objects, empties each event it is given, and chats. */
class UnusualButCorrect extends TokenAssembler {
  apply(event) {
    // A testee's stdout belongs to the protocol: said at each instance's first event (at
    // every event, the logging was most of what the corpus cost this class in node --test).
    if (!this.said) console.log('applying', event);
    this.said = true;
    const text = super.apply(event);
    for (const key of Object.keys(event ?? {})) delete event[key];
    return text === null ? null : new String(text); // eslint-disable-line no-new-wrappers
  }

  get(id) {
    const text = super.get(id);
    return text === null ? null : new String(text); // eslint-disable-line no-new-wrappers
  }
}

/**
 * Correct: its readSince(id, count) answers the deltas after the first `count`, as an array,
 * for a client that reconnects. The seed never names readSince: this one is no claim of the
 * incremental profile, whose readSince returns text, so no default check may call it.
 */
class ReplaysDeltasSince extends TokenAssembler {
  constructor() {
    super();
    this.log = new Map();
  }

  apply(event) {
    const open = this.messages.get(event?.id)?.final !== true;
    const text = super.apply(event);
    if (open && Object.hasOwn(event, 'delta')) {
      if (!this.log.has(event.id)) this.log.set(event.id, []);
      this.log.get(event.id).push(event.delta);
    }
    return text;
  }

  readSince(id, count) {
    return (this.log.get(id) ?? []).slice(count);
  }
}

module.exports = { ReadSinceUtf16, ReplaysDeltasSince, TrimsText, UnusualButCorrect };
