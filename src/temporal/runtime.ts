import { DefaultLogger, Runtime, type LogLevel } from '@temporalio/worker';
import type { Logger } from '../logger';

const pinoLevels: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

/**
 * Sends the Temporal SDK's logs through our JSON logger (warnings and up: its info level prints the
 * whole webpack report), and leaves signal handling to us so that shutdown happens in our order.
 */
let installed = false;

export function installTemporalRuntime(logger: Logger) {
  if (installed) return; // the runtime is process-wide and can be installed once
  installed = true;
  const temporalLogger = logger.child({ component: 'temporal' });
  Runtime.install({
    shutdownSignals: [],
    logger: new DefaultLogger('WARN', ({ level, message, meta }) => temporalLogger[pinoLevels[level]](meta ?? {}, message)),
  });
}
