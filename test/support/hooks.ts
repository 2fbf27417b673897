import { stopSharedSystem } from './system';

// Mocha root hooks for the integration run: stop the shared system once everything has run.
export const mochaHooks = {
  async afterAll() {
    await stopSharedSystem();
  },
};
