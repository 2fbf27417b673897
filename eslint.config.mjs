import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((name) => `node:${name}`)];

// The tiers (docs/architecture.md, "Tiers"). An import may go down or sideways, never back up:
//   entry points  src/app.ts, system.ts, main.ts, cli/, console/, signerPortal/, verification/, docs/, health/
//   worker side   src/worker/, activities/, workflows/ (workflows: only src/domain, the workflow SDK and types)
//   resources     accounts, apiKeys, documents, templates, signingRequests, webhooks, events, mail, pdf,
//                 search and dashboard (read models), temporal (the client services use)
//   infrastructure  config, logger, errors, ids, metrics, dataDirSecret, secretBox, db/, api/ (the HTTP route kit)
//   domain        src/domain/: the vocabulary, pure data and types, no I/O
const entryPoints = ['app', 'system', 'main', 'cli', 'console', 'signerPortal', 'verification', 'docs', 'health'];
const workerSide = ['worker', 'activities', 'workflows'];
const resources = ['accounts', 'apiKeys', 'documents', 'templates', 'signingRequests', 'webhooks', 'events', 'mail', 'pdf', 'search', 'dashboard', 'temporal'];
const infrastructure = ['config', 'logger', 'errors', 'ids', 'metrics', 'dataDirSecret', 'secretBox', 'db', 'api'];
// A relative import that leaves its folder (`../`…, `../src/`…) for one of `names`; `./` too where asked (files at the top of src/).
const reaching = (names, { sameFolder = false } = {}) => `^(${sameFolder ? '\\.\\.?' : '\\.\\.'}/)+(src/)?(${names.join('|')})(/|\\.ts$|$)`;
const upward = (tier, names, options) => ({
  regex: reaching(names, options),
  message: `The ${tier} import nothing above them (see docs/architecture.md, "Tiers"): pass what you need in from where the system is assembled.`,
});
const tierRule = (...patterns) => ({ 'no-restricted-imports': ['error', { patterns }] });

export default tseslint.config(
  // sdk/src/generated: written by @hey-api/openapi-ts (npm run sdk:generate), checked against it, not edited.
  { ignores: ['node_modules/**', '.cache/**', 'data/**', 'sdk/src/generated/**'] },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-require-imports': 'off',
    },
  },
  {
    // The domain: pure vocabulary. Nothing from outside src/domain, no package, no Node built-in.
    files: ['src/domain/**/*.ts'],
    rules: tierRule(
      { regex: '^\\.\\./', message: 'src/domain is the ground floor: it imports only src/domain (see docs/architecture.md, "Tiers").' },
      { regex: '^[^.]', message: 'src/domain is pure vocabulary: no packages, no I/O (see docs/architecture.md, "Tiers").' },
    ),
  },
  {
    // Infrastructure: its types may name what the route kit carries (api/routeDeps.ts), its code imports nothing above.
    files: infrastructure.flatMap((name) => [`src/${name}.ts`, `src/${name}/**/*.ts`]),
    rules: tierRule({ ...upward('infrastructure modules', [...resources, ...workerSide, ...entryPoints], { sameFolder: true }), allowTypeImports: true }),
  },
  {
    files: [`src/{${resources.filter((name) => name !== 'temporal').join(',')}}/**/*.ts`],
    rules: tierRule(upward('resource modules', [...workerSide, ...entryPoints])),
  },
  {
    // The Temporal client shares workflows/definitions.ts (updates, signals, queries) with the worker,
    // as the Temporal samples' shared.ts, and names workflow functions by type only.
    files: ['src/temporal/**/*.ts'],
    rules: tierRule(upward('resource modules', ['worker', 'activities', ...entryPoints]), {
      regex: '^(\\.\\./)+workflows/(?!definitions$)',
      allowTypeImports: true,
      message: 'The Temporal client imports only workflows/definitions and workflow types.',
    }),
  },
  {
    files: ['src/worker/**/*.ts', 'activities/**/*.ts'],
    rules: tierRule(upward('worker side', entryPoints)),
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
            {
              regex: '^\\.\\./(?!workflows/|src/domain/)',
              allowTypeImports: true,
              message: 'Import only types from outside workflows/ (and src/domain, the pure vocabulary).',
            },
          ],
        },
      ],
      'no-restricted-globals': ['error', 'setTimeout', 'setInterval', 'fetch', 'process', 'require'],
    },
  },
);
