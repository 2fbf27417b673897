import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client } from '@temporalio/client';

export const sweeperScheduleId = (taskQueue: string) => `${taskQueue}-sweeper`;

/**
 * The sweeper: a Temporal schedule that runs sweeperWorkflow every minute on this task queue, so that
 * work committed to PostgreSQL by a process that died before handing it to Temporal (an event's
 * delivery, a signing request's workflow) is still started. Created once; every worker start makes
 * sure it exists.
 */
export async function ensureSweeperSchedule(client: Client, taskQueue: string) {
  const scheduleId = sweeperScheduleId(taskQueue);
  try {
    await client.schedule.create({
      scheduleId,
      spec: { intervals: [{ every: '1 minute' }] },
      action: { type: 'startWorkflow', workflowType: 'sweeperWorkflow', workflowId: scheduleId, taskQueue },
      policies: { overlap: ScheduleOverlapPolicy.SKIP },
    });
  } catch (error) {
    if (!(error instanceof ScheduleAlreadyRunning)) throw error;
  }
}
