#!/usr/bin/env node
// A streaming token assembler in JavaScript, served as a tokasm protocol testee.
//
// Protocol version 1 (spec/PROTOCOL.md): one JSON request per stdin line, one
// JSON response per stdout line, in order; end of stdin ends the process.
// No npm dependencies. It passes the required, incremental and strict profiles.
//
// JavaScript strings are UTF-16, but the spec counts code points (SPEC Scope):
// an emoji is one character. read_since converts its code-point offset to
// UTF-16 units before slicing.
'use strict';

const fs = require('node:fs');
const { StringDecoder } = require('node:string_decoder');

const PROTOCOL_VERSION = 1;

/** The strict profile's second error kind (JavaScript has TypeError built in). */
class ValueError extends Error {
  constructor(message) {
    super(message);
    this.name = 'ValueError';
  }
}

const isHighSurrogate = (unit) => unit >= 0xd800 && unit <= 0xdbff;
const isLowSurrogate = (unit) => unit >= 0xdc00 && unit <= 0xdfff;

/** Width in UTF-16 units of the code point starting at `index`. */
function unitsAt(text, index) {
  return isHighSurrogate(text.charCodeAt(index)) &&
    isLowSurrogate(text.charCodeAt(index + 1)) ? 2 : 1;
}

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
      // CREATE. `cursor` remembers the last offset converted to UTF-16 units, so a
      // reader moving forward with read_since pays only for the new text (INC-LINEAR).
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

  readSince(id, offset) {
    const message = this.messages.get(id);
    if (message === undefined) return null; // INC-UNKNOWN
    const { text, cursor } = message;
    let { points, units } = offset >= cursor.points ? cursor : { points: 0, units: 0 };
    while (points < offset && units < text.length) {
      units += unitsAt(text, units);
      points++;
    }
    message.cursor = { points, units };
    return text.slice(units); // INC-READ-SINCE, INC-OFFSET-END
  }
}

const instances = new Map();

function field(request, name, type) {
  if (typeof request[name] !== type) {
    throw new TypeError(`request needs a ${type} '${name}', got ${describe(request[name])}`);
  }
  return request[name];
}

function assembler(request) {
  const found = instances.get(field(request, 'instance', 'string'));
  if (found === undefined) throw new ValueError(`no instance '${request.instance}'`);
  return found;
}

function handle(request) {
  switch (request.op) {
    case 'hello':
      if (request.protocol !== PROTOCOL_VERSION) {
        throw new ValueError(`this testee speaks protocol ${PROTOCOL_VERSION} only`);
      }
      return { ok: true, protocol: PROTOCOL_VERSION, name: `tokasm-node (node ${process.version})`,
        features: ['read_since'] };
    case 'new':
      instances.set(field(request, 'instance', 'string'), new TokenAssembler());
      return { ok: true };
    case 'apply':
      return { ok: true, result: assembler(request).apply(request.event) };
    case 'get':
      return { ok: true, result: assembler(request).get(field(request, 'id', 'string')) };
    case 'read_since': {
      const offset = field(request, 'offset', 'number');
      if (!Number.isInteger(offset) || offset < 0) {
        throw new ValueError(`offset must be a non-negative integer, got ${offset}`);
      }
      return { ok: true, result: assembler(request).readSince(field(request, 'id', 'string'), offset) };
    }
    default:
      throw new ValueError(`unknown op ${JSON.stringify(request.op)}`);
  }
}

function respond(line) {
  try {
    return handle(JSON.parse(line));
  } catch (error) {
    const kind = error instanceof Error ? error.name : 'Error';
    return { ok: false, error: String(error instanceof Error ? error.message : error), kind };
  }
}

/** Blocking reads and writes: no event loop between a request and its response. */
function serve() {
  const decoder = new StringDecoder('utf8'); // a character may straddle two reads
  const chunk = Buffer.alloc(1 << 16);
  let pending = '';
  let scanned = 0; // no line feed before this index: a long line is scanned once
  for (let size; (size = fs.readSync(0, chunk, 0, chunk.length, null)) > 0;) {
    pending += decoder.write(chunk.subarray(0, size));
    for (let end; (end = pending.indexOf('\n', scanned)) >= 0; scanned = 0) {
      const line = pending.slice(0, end);
      pending = pending.slice(end + 1);
      if (line.trim() !== '') fs.writeSync(1, `${JSON.stringify(respond(line))}\n`);
    }
    scanned = pending.length;
  }
}

serve(); // returns at end of stdin, and the process exits
