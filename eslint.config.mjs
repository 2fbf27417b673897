import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((name) => `node:${name}`)];

export default tseslint.config(
  { ignores: ['node_modules/**', '.cache/**', 'data/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-require-imports': 'off',
    },
  },
  {
    // Workflows must be deterministic: no Node built-ins, no I/O libraries, nothing but the workflow
    // SDK, their own definitions, the pure vocabulary of src/domain and types. They reach the world
    // only through activities.
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({ name, message: 'Workflows cannot use Node built-ins; use an activity.' })),
          patterns: [
            {
              regex: '^(?!@temporalio/(workflow|common)$)[^.]',
              allowTypeImports: true,
              message: 'Workflows import only @temporalio/workflow|common, their own modules, src/domain and types; do I/O in activities.',
            },
            { regex: '^\\.\\./(?!workflows/|src/domain/)', allowTypeImports: true, message: 'Import only types from outside workflows/ (and src/domain, the pure vocabulary).' },
          ],
        },
      ],
      'no-restricted-globals': ['error', 'setTimeout', 'setInterval', 'fetch', 'process', 'require'],
    },
  },
);
