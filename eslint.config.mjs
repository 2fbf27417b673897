import tseslint from 'typescript-eslint';
import { builtinModules } from 'node:module';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((name) => `node:${name}`)];

// The tiers (docs/architecture.md, "Tiers"). An import may go down or sideways, never back up:
//   entry points  src/app.ts, system.ts, main.ts, openapiDocument.ts, cli/, console/, signerPortal/, verification/, docs/, health/
//   worker side   src/worker/, activities/, workflows/ (workflows: only src/domain, the workflow SDK and types)
//   resources     in the order below, lowest first: each imports only those before it
//   infrastructure  config, logger, errors, ids, metrics, dataDirSecret, secretBox, db/, api/ (the HTTP route kit)
//   domain        src/domain/: the vocabulary, pure data and types, no I/O
const entryPoints = ['app', 'system', 'main', 'openapiDocument', 'cli', 'console', 'signerPortal', 'verification', 'docs', 'health'];
const workerSide = ['worker', 'activities', 'workflows'];
// The Temporal client, the event log, form fields' rules and the PDF library at the bottom, then the account everything belongs
// to, mail, API keys, documents, templates made from documents, webhooks, signing requests, bulk sends of them, and the read
// models over them: search, then the dashboard.
const resources = [
  'temporal',
  'events',
  'fields',
  'pdf',
  'accounts',
  'mail',
  'apiKeys',
  'documents',
  'templates',
  'webhooks',
  'signingRequests',
  'bulkSends',
  'search',
  'dashboard',
];
const infrastructure = ['config', 'logger', 'errors', 'ids', 'metrics', 'dataDirSecret', 'secretBox', 'db', 'api'];
const code = '{ts,js,mjs,cjs}';
// A relative import that leaves its folder (`../`…, `../src/`…) for one of `names`; `./` too where asked (files at the top of src/).
const reaching = (names, { sameFolder = false } = {}) => `^(${sameFolder ? '\\.\\.?' : '\\.\\.'}/)+(src/)?(${names.join('|')})(/|\\.[cm]?[jt]s$|$)`;
const upward = (tier, names, options) => ({
  regex: reaching(names, options),
  message: `The ${tier} import nothing above them (see docs/architecture.md, "Tiers"): pass what you need in from where the system is assembled.`,
});
const laterResources = (name) => {
  const later = resources.slice(resources.indexOf(name) + 1);
  const message = `${name} imports only the resources listed before it in eslint.config.mjs (see docs/architecture.md, "Tiers").`;
  return later.length ? [{ regex: reaching(later), message }] : [];
};

// `no-restricted-imports` sees import and export statements; this rule applies the same patterns to
// `require('…')` and `import('…')` calls. A call always runs, so `allowTypeImports` does not apply.
const importCalls = {
  meta: { type: 'problem', schema: false },
  create(context) {
    const patterns = context.options[0].patterns.map(({ regex, message }) => ({ regex: new RegExp(regex), message }));
    const check = (source) => {
      if (source?.type !== 'Literal' || typeof source.value !== 'string') return;
      const pattern = patterns.find(({ regex }) => regex.test(source.value));
      if (pattern) context.report({ node: source, message: `'${source.value}' import is restricted from being used by a pattern. ${pattern.message}` });
    };
    return {
      ImportExpression: (node) => check(node.source),
      'CallExpression[callee.name="require"], CallExpression[callee.property.name="require"]': (node) => check(node.arguments[0]),
    };
  },
};
// Workflows must be deterministic: no Node built-ins, no I/O libraries, nothing but the workflow SDK,
// their own definitions, the pure vocabulary of src/domain and types. They reach the world only through activities.
const workflowImports = [
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
];
const tierRule = (...patterns) => ({
  'no-restricted-imports': ['error', { patterns }],
  'tiers/import-calls': ['error', { patterns }],
});

export default tseslint.config(
  // sdk/src/generated: written by @hey-api/openapi-ts (npm run sdk:generate), checked against it, not edited.
  { ignores: ['node_modules/**', '.cache/**', 'data/**', 'dist/**', 'sdk/src/generated/**'] },
  ...tseslint.configs.recommended,
  {
    plugins: { tiers: { rules: { 'import-calls': importCalls } } },
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-require-imports': 'off',
    },
  },
  {
    // The domain: pure vocabulary. Nothing from outside src/domain, no package, no Node built-in.
    files: [`src/domain/**/*.${code}`],
    rules: tierRule(
      { regex: '^\\.\\./', message: 'src/domain is the ground floor: it imports only src/domain (see docs/architecture.md, "Tiers").' },
      { regex: '^[^.]', message: 'src/domain is pure vocabulary: no packages, no I/O (see docs/architecture.md, "Tiers").' },
    ),
  },
  {
    // Infrastructure: its types may name what the route kit carries (api/routeDeps.ts), its code imports nothing above.
    files: infrastructure.flatMap((name) => [`src/${name}.${code}`, `src/${name}/**/*.${code}`]),
    rules: tierRule({ ...upward('infrastructure modules', [...resources, ...workerSide, ...entryPoints], { sameFolder: true }), allowTypeImports: true }),
  },
  // A resource that starts or signals its workflows shares workflows/definitions.ts (updates, signals,
  // queries) with the worker, as the Temporal samples' shared.ts, and names workflow functions by type only.
  ...resources.map((name) => ({
    files: [`src/${name}/**/*.${code}`],
    rules: tierRule(upward('resource modules', ['worker', 'activities', ...entryPoints]), ...laterResources(name), {
      regex: '^(\\.\\./)+workflows/(?!definitions$)',
      allowTypeImports: true,
      message: 'Resources import only workflows/definitions and workflow types from the worker side.',
    }),
  })),
  {
    files: [`src/worker/**/*.${code}`, `activities/**/*.${code}`],
    rules: tierRule(upward('worker side', entryPoints)),
  },
  {
    files: [`workflows/**/*.${code}`],
    rules: {
      'no-restricted-imports': [
        'error',
        { paths: nodeBuiltins.map((name) => ({ name, message: 'Workflows cannot use Node built-ins; use an activity.' })), patterns: workflowImports },
      ],
      'tiers/import-calls': ['error', { patterns: workflowImports }],
      'no-restricted-globals': ['error', 'setTimeout', 'setInterval', 'fetch', 'process', 'require'],
    },
  },
);
