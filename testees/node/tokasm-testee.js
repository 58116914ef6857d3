#!/usr/bin/env node
// A JavaScript assembler served as a tokasm protocol testee (spec/PROTOCOL.md):
//   tokasm check --cmd "node testees/node/tokasm-testee.js" --profile strict
//   tokasm check --cmd "node testees/node/tokasm-testee.js ./src/my-assembler.js:MyAssembler"
// Without an argument it serves the reference TokenAssembler (token-assembler.js).
'use strict';

const { loadTarget, serve } = require('./tokasm.js');

const spec = process.argv[2] ?? `${__dirname}/token-assembler.js:TokenAssembler`;
serve(loadTarget(spec)); // returns at end of stdin, and the process exits
