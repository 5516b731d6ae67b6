import { afterAll } from 'vitest';
import { removeTempDirs } from './temp-dir.js';

// A setup file: runs before each test file, so this hook ends each file (after the file's own afterAll hooks, which
// may still use the folders: vitest runs after-hooks in the reverse order of their registration).
afterAll(removeTempDirs);
