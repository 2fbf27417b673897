import path from 'node:path';
import { z } from 'zod';

// Every environment variable Signet reads. docker-compose.yml and the README are checked against this list.
export const configSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default('0.0.0.0'),
  PUBLIC_URL: z.string().url().optional(),
  DATA_DIR: z.string().default('./data'),
  DATABASE_URL: z.string().optional(),
  DATABASE_POOL_MAX: z.coerce.number().int().positive().default(10),
  TEMPORAL_ADDRESS: z.string().optional(),
  TEMPORAL_NAMESPACE: z.string().default('default'),
  TEMPORAL_TASK_QUEUE: z.string().default('signet'),
  TEMPORAL_CLI_PATH: z.string().optional(),
  TEMPORAL_PORT: z.coerce.number().int().positive().default(7233),
  TEMPORAL_UI_PORT: z.coerce.number().int().positive().default(8233),
  ELASTICSEARCH_URL: z.string().url().optional(),
  ELASTICSEARCH_INDEX_PREFIX: z.string().regex(/^[a-z0-9][a-z0-9_.-]*$/, { error: 'must be lower-case letters, digits, _ . -' }).default('signet-'),
  SIGNET_PROCESSES: z.string().default('api,worker'),
  MAX_UPLOAD_BYTES: z.coerce.number().int().positive().default(25 * 1024 * 1024),
  MAX_CONCURRENT_UPLOADS: z.coerce.number().int().positive().default(2),
  RATE_LIMIT_MULTIPLIER: z.coerce.number().positive().default(1),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  MAIL_FROM: z.string().min(1).default('Signet <no-reply@signet.local>'),
  SENDGRID_API_KEY: z.string().optional(),
  SENDGRID_API_URL: z.string().url().optional(),
  SMTP_URL: z.string().optional(),
  SIGNING_TOKEN_SECRET: z.string().min(32).optional(),
  SEAL_P12_PATH: z.string().optional(),
  SEAL_P12_PASSWORD: z.string().default(''),
  WEBHOOK_SECRET_KEY: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/, { error: 'must be 32 bytes as 64 hex digits' })
    .optional(),
  WEBHOOK_ALLOW_PRIVATE_HOSTS: z.string().default(''),
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().positive().default(15_000),
  WEBHOOK_RETRY_SCALE: z.coerce.number().positive().max(1).default(1),
});

export type Env = z.infer<typeof configSchema>;

export interface Config extends Env {
  dataDir: string;
  publicUrl: string;
  runApi: boolean;
  runWorker: boolean;
  /** WEBHOOK_ALLOW_PRIVATE_HOSTS split: host names, IP addresses or CIDR ranges deliveries may reach though not public. */
  webhookAllowedPrivateHosts: string[];
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = configSchema.safeParse(env);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new Error(`Invalid configuration:\n  ${problems.join('\n  ')}`);
  }
  const values = parsed.data;
  const processes = values.SIGNET_PROCESSES.split(',').map((name) => name.trim());
  return {
    ...values,
    dataDir: path.resolve(values.DATA_DIR),
    publicUrl: (values.PUBLIC_URL ?? `http://localhost:${values.PORT}`).replace(/\/$/, ''),
    runApi: processes.includes('api'),
    runWorker: processes.includes('worker'),
    webhookAllowedPrivateHosts: values.WEBHOOK_ALLOW_PRIVATE_HOSTS.split(',').map((host) => host.trim().toLowerCase()).filter(Boolean),
  };
}
