// JavaScript assemblers for tests/test_node_route.py: broken ones, each wrong in one rule,
// that the JS routes must fail, and an unusual but correct one that they must pass.
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

module.exports = { ReadSinceUtf16, TrimsText, UnusualButCorrect };
