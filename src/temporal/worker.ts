import { NativeConnection, Worker } from '@temporalio/worker';
import { createActivities, type ActivityDeps } from '../../activities';

export async function createWorker(options: { address: string; namespace: string; taskQueue: string; deps: ActivityDeps }) {
  const connection = await NativeConnection.connect({ address: options.address });
  const worker = await Worker.create({
    connection,
    namespace: options.namespace,
    taskQueue: options.taskQueue,
    workflowsPath: require.resolve('../../workflows'),
    activities: createActivities(options.deps),
  });
  return { worker, connection };
}
