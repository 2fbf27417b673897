import { MultiBar, Presets } from 'cli-progress';
import type { Config } from '../config';
import type { Db } from '../db';
import { createElasticsearchClient } from './elasticsearch';
import { rebuildIndex } from './elasticsearchBackend';
import { searchTypesOf } from './esIndices';

/**
 * `npx signet reindex`: every index rebuilt from PostgreSQL into a new versioned index, its alias flipped
 * when it is complete, with one progress bar per index on stderr. Searches keep working meanwhile.
 */
export async function reindexAll(db: Db, config: Pick<Config, 'ELASTICSEARCH_URL' | 'ELASTICSEARCH_INDEX_PREFIX'>) {
  if (!config.ELASTICSEARCH_URL) {
    process.stderr.write('ELASTICSEARCH_URL is not set: search runs on PostgreSQL, whose full-text columns are always up to date.\n');
    return { rebuilt: [] };
  }
  const client = createElasticsearchClient(config.ELASTICSEARCH_URL);
  const bars = new MultiBar({ format: '{name} [{bar}] {value}/{total} ({percentage}%)', hideCursor: true, stream: process.stderr }, Presets.shades_classic);
  try {
    const rebuilt = [];
    for (const type of searchTypesOf) {
      const bar = bars.create(1, 0, { name: type.padEnd(15) });
      const result = await rebuildIndex(db, client, config.ELASTICSEARCH_INDEX_PREFIX, type, ({ done, total }) => {
        bar.setTotal(Math.max(total, 1));
        bar.update(done);
      });
      bar.update(bar.getTotal());
      rebuilt.push({ type, ...result });
    }
    return { rebuilt };
  } finally {
    bars.stop();
    await client.close();
  }
}
