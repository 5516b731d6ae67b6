// Lint without type information (typescript-eslint's recommended set): fast enough to run inside `npm test`.
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  { ignores: ['node_modules/', 'fixtures/', 'coverage/', 'dist/'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    rules: {
      // `{ notes: _ignored, ...rest }` is how the house drops a key from an object.
      '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true, argsIgnorePattern: '^_' }],
      // Control bytes are matched on purpose: NULs stripped from issue text, the ASCII test before slicing UTF-8 offsets.
      'no-control-regex': 'off',
    },
  },
  {
    // Tests read untyped JSON (Kubernetes manifests, captured API bodies); a type per probe would check nothing.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    files: ['**/*.{js,mjs}'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
  },
);
