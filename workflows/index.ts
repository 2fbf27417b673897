// Deterministic workflow code only: this folder is bundled by the worker and linted so that it
// cannot import Node built-ins or anything that does I/O. Workflows call the world through activities.
export { signingRequestWorkflow } from './signingRequest';
export { webhookWorkflow } from './webhook';
export { sweeperWorkflow } from './sweeper';
export { searchIndexerWorkflow } from './searchIndexer';
export { archiveRenewalWorkflow } from './archiveRenewal';
export { bulkSendWorkflow } from './bulkSend';
