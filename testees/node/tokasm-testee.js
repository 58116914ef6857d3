#!/usr/bin/env node
// The reference JavaScript assembler served as a tokasm protocol testee (spec/PROTOCOL.md):
//   tokasm check --cmd "node testees/node/tokasm-testee.js" --profile strict
// Your own: serve(() => new MyAssembler()) from tokasm.js, the rest is done.
'use strict';

const { serve } = require('./tokasm.js');
const { TokenAssembler } = require('./token-assembler.js');

serve(TokenAssembler); // returns at end of stdin, and the process exits
