import { expect } from 'chai';
import { createLogger } from '../../src/logger';
import { buildTemporalCli } from '../../src/temporal/devServer';

// Without a Temporal CLI, `npm start` builds one with Go (scripts/provision.sh temporal), which is
// silent for minutes while it compiles: the build's progress is logged while it runs. A script that
// talks as provision.sh and `go install -v` do stands in for the build.
function recordingLogger() {
  const lines: { msg: string; modules?: number; packages?: number }[] = [];
  const logger = createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { logger, lines };
}

const fakeBuild = (script: string) => ['bash', '-c', script];

describe('building the Temporal CLI when there is none', () => {
  it('says why and how to skip it, logs the modules downloaded and packages compiled while it runs, and answers the binary', async () => {
    const { logger, lines } = recordingLogger();
    const script = [
      'echo "[provision] building temporal CLI v1.5.1 with go" >&2',
      'echo "go: downloading github.com/temporalio/cli v1.5.1" >&2',
      'echo "go: downloading go.temporal.io/server v1.29.1" >&2',
      'sleep 0.3',
      'for p in go.temporal.io/api/common/v1 github.com/temporalio/cli/cmd/temporal; do echo $p >&2; done',
      'sleep 0.3',
      'echo /tmp/bin/temporal',
    ].join('\n');
    const binary = await buildTemporalCli(logger, { command: fakeBuild(script), progressEveryMs: 100 });
    expect(binary).to.equal('/tmp/bin/temporal');
    const messages = lines.map((line) => line.msg);
    expect(messages[0]).to.contain('building it with Go from the Go module proxy');
    expect(messages[0]).to.contain('Set TEMPORAL_CLI_PATH');
    expect(messages).to.include('[provision] building temporal CLI v1.5.1 with go');
    const progress = lines.filter((line) => line.msg.startsWith('Building the Temporal CLI: '));
    expect(progress.length).to.be.greaterThan(2);
    expect(progress.at(-1)).to.include({ modules: 2, packages: 2 });
    expect(progress.at(-1)!.msg).to.match(/^Building the Temporal CLI: \d+ s, 2 modules downloaded, 2 packages compiled$/);
    expect(messages.at(-1)).to.match(/^Built the Temporal CLI in \d+ s: \/tmp\/bin\/temporal$/);
  });

  it('fails with what the build said and the two settings that avoid it', async () => {
    const { logger } = recordingLogger();
    const failure = await buildTemporalCli(logger, { command: fakeBuild('echo "go: cannot reach proxy.golang.org" >&2; exit 1'), progressEveryMs: 100 }).catch(
      (error: Error) => error,
    );
    expect(failure).to.be.instanceOf(Error);
    expect((failure as Error).message).to.contain('exit 1');
    expect((failure as Error).message).to.contain('TEMPORAL_CLI_PATH');
    expect((failure as Error).message).to.contain('TEMPORAL_ADDRESS');
    expect((failure as Error).message).to.contain('go: cannot reach proxy.golang.org');
  });
});
