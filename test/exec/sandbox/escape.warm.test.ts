import { defineEscapeSuite } from './escape-suite.js';

// The escape suite (test/exec/sandbox/escape-suite.ts) for runs forked from the warm pool's server.
defineEscapeSuite('warm');
