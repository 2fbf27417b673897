#!/usr/bin/env node
// `npx signet …`: runs the TypeScript CLI through tsx, like `npm start` does.
require('tsx/cjs/api').register();
require('./signet.ts');
