import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client } from '@temporalio/client';

/**
 * The sweeper: a Temporal schedule that runs sweepEventsWorkflow every minute on this task queue, so
 * an event whose process died between its commit and its dispatch is still delivered. Created once;
 * every worker start makes sure it exists.
 */
export async function ensureSweepSchedule(client: Client, taskQueue: string) {
  const scheduleId = sweepScheduleId(taskQueue);
  try {
    await client.schedule.create({
      scheduleId,
      spec: { intervals: [{ every: '1 minute' }] },
      action: { type: 'startWorkflow', workflowType: 'sweepEventsWorkflow', workflowId: scheduleId, taskQueue },
      policies: { overlap: ScheduleOverlapPolicy.SKIP },
    });
  } catch (error) {
    if (!(error instanceof ScheduleAlreadyRunning)) throw error;
  }
  return client.schedule.getHandle(scheduleId);
}

export const sweepScheduleId = (taskQueue: string) => `${taskQueue}-sweep-events`;
