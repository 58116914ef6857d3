// Broken JavaScript assemblers, each wrong in one rule, that the JS routes must fail
// (tests/test_node_route.py), next to the reference TokenAssembler that passes.
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

module.exports = { ReadSinceUtf16, TrimsText };
