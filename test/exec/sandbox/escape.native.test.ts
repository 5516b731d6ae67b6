import { defineEscapeSuite } from './escape-suite.js';

// The escape suite (test/exec/sandbox/escape-suite.ts) for runs started by the C launcher.
defineEscapeSuite('native');
