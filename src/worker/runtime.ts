import net from 'node:net';
import { DefaultLogger, Runtime, type LogLevel } from '@temporalio/worker';
import type { Logger } from '../logger';

const pinoLevels: Record<LogLevel, 'trace' | 'debug' | 'info' | 'warn' | 'error'> = {
  TRACE: 'trace',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
};

let installed: Promise<string | undefined> | undefined;

/**
 * Sends the Temporal SDK's logs through our JSON logger (warnings and up: its info level prints the
 * whole webpack report), and leaves signal handling to us so that shutdown happens in our order.
 * With `metrics`, the SDK's worker metrics are served on a free loopback port, whose /metrics URL is
 * returned: our own /metrics appends them (src/metrics.ts), so operators scrape one endpoint per process.
 */
export function installTemporalRuntime(logger: Logger, { metrics }: { metrics: boolean }) {
  installed ??= install(logger, metrics); // the runtime is process-wide and can be installed once
  return installed;
}

async function install(logger: Logger, metrics: boolean) {
  const temporalLogger = logger.child({ component: 'temporal' });
  const port = metrics ? await freeLoopbackPort() : undefined;
  Runtime.install({
    shutdownSignals: [],
    logger: new DefaultLogger('WARN', ({ level, message, meta }) => temporalLogger[pinoLevels[level]](meta ?? {}, message)),
    // Seconds, as Prometheus expects and as our own histograms are.
    ...(port ? { telemetryOptions: { metrics: { prometheus: { bindAddress: `127.0.0.1:${port}`, useSecondsForDurations: true } } } } : {}),
  });
  return port ? `http://127.0.0.1:${port}/metrics` : undefined;
}

// Core binds the address it is given and cannot say which port 0 chose: ask the kernel for one first.
function freeLoopbackPort() {
  return new Promise<number>((resolve, reject) => {
    const probe = net.createServer().once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}
