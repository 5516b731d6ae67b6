import { defineEscapeSuite } from './escape-suite.js';

// The escape suite (test/exec/sandbox/escape-suite.ts) for runs started by the Python launcher (used where no C compiler is).
defineEscapeSuite('python');
