// Deterministic workflow code only: this folder is bundled by the worker and linted so that it
// cannot import Node built-ins or anything that does I/O. Workflows call the world through activities.
//
// The signing request workflow (one per request, id = sr_…) lands here with the signing issue.
export {};
