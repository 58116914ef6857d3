// The reference streaming token assembler in JavaScript (SPEC.md ids beside the code).
// It passes the required, incremental and strict profiles, in process
// (node --test conformance.test.js) and as a protocol testee (tokasm-testee.js).
'use strict';

const { ValueError, codePointIndex } = require('./tokasm.js');

function describe(value) {
  if (value === null) return 'null';
  return Array.isArray(value) ? 'array' : typeof value;
}

/** STRICT-*: refuse a malformed event before touching any state. */
function validateEvent(event) {
  if (typeof event !== 'object' || event === null || Array.isArray(event)) {
    throw new TypeError(`event must be an object, got ${describe(event)}`); // STRICT-EVENT-TYPE
  }
  if (!Object.hasOwn(event, 'id')) {
    throw new ValueError("event is missing the required field 'id'"); // STRICT-ID-MISSING
  }
  // STRICT-ID-TYPE, STRICT-DELTA-TYPE, STRICT-FINAL-TYPE
  for (const [field, type] of [['id', 'string'], ['delta', 'string'], ['final', 'boolean']]) {
    if (Object.hasOwn(event, field) && typeof event[field] !== type) {
      throw new TypeError(`event field '${field}' must be a ${type}, got ${describe(event[field])}`);
    }
  }
}

class TokenAssembler {
  constructor() {
    // ASM-STATE: per instance. A Map, so any string is an id (EVT-ID-ANY), "__proto__" too.
    this.messages = new Map();
  }

  apply(event) {
    validateEvent(event);
    const final = event.final === true; // EVT-SHAPE: missing final is false
    let message = this.messages.get(event.id);
    if (message !== undefined && message.final) {
      // AFTER-DELTA-IGNORED, AFTER-REFINAL, AFTER-NONFINAL
      return final ? message.text : null;
    }
    if (message === undefined) {
      // CREATE. `cursor` remembers the last offset converted to UTF-16 units (INC-LINEAR).
      message = { text: '', final: false, cursor: { points: 0, units: 0 } };
      this.messages.set(event.id, message);
    }
    if (Object.hasOwn(event, 'delta')) message.text += event.delta; // APPEND, APPEND-EMPTY
    if (!final) return null; // NONFINAL-NONE
    message.final = true; // the text is kept as is: CACHE-FINAL
    return message.text; // FINAL-RETURN, FINAL-UNSEEN
  }

  get(id) {
    const message = this.messages.get(id);
    return message === undefined ? null : message.text; // GET-TEXT, GET-UNKNOWN
  }

  /** Offsets count code points, not UTF-16 units (SPEC Scope): an emoji is one. */
  readSince(id, offset) {
    const message = this.messages.get(id);
    if (message === undefined) return null; // INC-UNKNOWN
    message.cursor = codePointIndex(message.text, offset, message.cursor);
    return message.text.slice(message.cursor.units); // INC-READ-SINCE, INC-OFFSET-END
  }
}

module.exports = { TokenAssembler };
