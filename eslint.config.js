// Lint rules: typescript-eslint's recommended set on the gateway, its tests, the bench and the pages.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'data/', 'test-output/', 'bench/fix-edits/cases.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      // Names starting with _ are placeholders kept on purpose (destructuring what is left out).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      // Parsed JSON and test doubles are typed at their edges; `any` stays where a test reads a body.
      '@typescript-eslint/no-explicit-any': 'off',
      'no-empty': ['error', { allowEmptyCatch: true }],
    },
  },
  { files: ['web/**/*.{ts,tsx}'], languageOptions: { globals: { ...globals.browser } } },
);
