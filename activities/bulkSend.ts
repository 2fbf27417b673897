import { Context } from '@temporalio/activity';
import type { Config } from '../src/config';
import type { Db } from '../src/db';
import type { EventLog } from '../src/events/service';
import { finishJob, sendQueuedRows } from '../src/bulkSends/service';
import { signingDepsFrom } from '../src/signingRequests/deps';
import type { TextTagFinder } from '../src/pdf/textTags';
import type { BulkSendActivities } from '../workflows/activities';

export interface BulkSendActivityDeps {
  db: Db;
  events: EventLog;
  config: Config;
}

// A bulk send's rows are made from a template, whose text tags were taken out when it was made: none is ever read here.
const noTextTags: TextTagFinder = {
  findTags: () => Promise.reject(new Error('a bulk send reads no text tags')),
  removeTags: () => Promise.reject(new Error('a bulk send reads no text tags')),
  close: async () => {},
};

// The activities of workflows/bulkSend.ts: each row is made with an id derived from the job and the row, so a batch
// retried after a crash finds what it made and makes nothing twice.
export function createBulkSendActivities({ db, events, config }: BulkSendActivityDeps): BulkSendActivities {
  const deps = () => {
    const { client, info } = Context.current();
    return { ...signingDepsFrom({ db, events, temporal: client, textTags: noTextTags, config }), taskQueue: info.taskQueue };
  };
  return {
    sendBulkRows: ({ bulkSendId, limit }) => sendQueuedRows(deps(), bulkSendId, limit),
    finishBulkSend: ({ bulkSendId, limit }) => finishJob(deps(), bulkSendId, limit),
  };
}
