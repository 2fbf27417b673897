import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { sealLevels } from './domain/signingRequests';

// Every environment variable Signet reads. docker-compose.yml and the README are checked against this list.
/** NIST SP 800-131A: SHA-1 signatures and RSA keys under 2048 bits are disallowed since 2014; 112-bit strength (RSA 2048, P-224) ends with 2030. */
export const DEFAULT_ALGORITHM_SUNSETS = 'sha1=2014-01-01,rsa-1024=2014-01-01,rsa-2048=2031-01-01,ec-secp224r1=2031-01-01';

export const configSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().default('0.0.0.0'),
  PUBLIC_URL: z.string().url().optional(),
  TRUST_PROXY: z.string().default(''),
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
  ELASTICSEARCH_INDEX_PREFIX: z
    .string()
    .regex(/^[a-z0-9][a-z0-9_.-]*$/, { error: 'must be lower-case letters, digits, _ . -' })
    .default('signet-'),
  SIGNET_PROCESSES: z.string().default('api,worker'),
  MAX_UPLOAD_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(25 * 1024 * 1024),
  MAX_CONCURRENT_UPLOADS: z.coerce.number().int().positive().default(2),
  /** Large bodies of public verification (POST /api/v1/verify) read at once: a pool of their own, so keyless requests take no slot from accounts. */
  MAX_CONCURRENT_VERIFY_UPLOADS: z.coerce.number().int().positive().default(1),
  /** Upload slots one client address holds at once, in each pool (behind a proxy, set TRUST_PROXY so that addresses are the clients'). */
  MAX_UPLOADS_PER_CLIENT_ADDRESS: z.coerce.number().int().positive().default(1),
  /** How long a large upload waits for a slot before it is answered 503 with Retry-After. */
  UPLOAD_SLOT_WAIT_MS: z.coerce.number().int().positive().default(10_000),
  /** A request body from which nothing arrives for this long is answered 408 and its connection closed. */
  BODY_IDLE_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
  /** A request body over 64 KiB that averages fewer bytes a second than this over BODY_RATE_WINDOW_MS is answered 408 and its connection closed. */
  BODY_MIN_BYTES_PER_SECOND: z.coerce
    .number()
    .int()
    .positive()
    .default(8 * 1024),
  BODY_RATE_WINDOW_MS: z.coerce.number().int().positive().default(20_000),
  PDF_POOL_SIZE: z.coerce.number().int().positive().default(2),
  PDF_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
  PDF_MAX_MEMORY_MB: z.coerce.number().int().min(64).default(256),
  PDF_MAX_PAGES: z.coerce.number().int().positive().default(2_000),
  PDF_MAX_OBJECTS: z.coerce.number().int().positive().default(100_000),
  PDF_MAX_DECOMPRESSED_BYTES: z.coerce
    .number()
    .int()
    .positive()
    .default(64 * 1024 * 1024),
  /** Documents one signing request may send (each at most PDF_MAX_PAGES), and pages across them. */
  REQUEST_MAX_DOCUMENTS: z.coerce.number().int().min(1).max(20).default(20),
  REQUEST_MAX_PAGES: z.coerce.number().int().positive().default(2_000),
  RATE_LIMIT_MULTIPLIER: z.coerce.number().positive().default(1),
  /** Public verifications (POST /api/v1/verify, the /verify page) per client address per hour. */
  VERIFY_REQUESTS_PER_HOUR: z.coerce.number().int().positive().default(60),
  /** Console sign-ups (new accounts) per client address per hour. */
  CONSOLE_SIGNUPS_PER_HOUR: z.coerce.number().int().positive().default(20),
  /** Prometheus /metrics, on a server of its own: 0 picks a free port, `off` serves none. */
  METRICS_PORT: z
    .union([z.literal('off'), z.coerce.number().int().min(0).max(65535)], { error: 'must be a port number (0: any free port) or off' })
    .default(9464),
  /** Loopback by default: the metrics are for the operator's Prometheus, never the public. */
  METRICS_HOST: z.string().default('127.0.0.1'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  MAIL_FROM: z.string().min(1).default('Signet <no-reply@signet.local>'),
  SENDGRID_API_KEY: z.string().optional(),
  SENDGRID_API_URL: z.string().url().optional(),
  SMTP_URL: z.string().optional(),
  SIGNING_TOKEN_SECRET: z.string().min(32).optional(),
  /** Signs the console's session cookies and CSRF tokens; unset: derived from SIGNING_TOKEN_SECRET (so production needs nothing more). */
  CONSOLE_SESSION_SECRET: z.string().min(32).optional(),
  SEAL_P12_PATH: z.string().optional(),
  SEAL_P12_PASSWORD: z.string().default(''),
  /** PEM: the certificates above the seal certificate (intermediates, then the root), when its file does not carry them. */
  SEAL_CHAIN_PATH: z.string().optional(),
  /** PEM: the seal certificate, for a key on a PKCS#11 token or in a KMS. */
  SEAL_CERTIFICATE_PATH: z.string().optional(),
  /** A key on a PKCS#11 token (an HSM): the module's path, the token's label, its user PIN and the key's label. */
  SEAL_PKCS11_MODULE: z.string().optional(),
  SEAL_PKCS11_TOKEN_LABEL: z.string().optional(),
  SEAL_PKCS11_PIN: z.string().optional(),
  SEAL_PKCS11_KEY_LABEL: z.string().optional(),
  /** An RSA key in AWS KMS: its id or ARN, region, and an endpoint other than AWS's (credentials: the AWS environment). */
  SEAL_KMS_KEY_ID: z.string().optional(),
  SEAL_KMS_REGION: z.string().optional(),
  SEAL_KMS_ENDPOINT: z.string().url().optional(),
  /** RFC 3161 timestamp authorities, in order of preference (comma-separated; credentials in a URL's userinfo). */
  SEAL_TSA_URLS: z.string().default(''),
  SEAL_TSA_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
  /** PAdES baseline level: B-LTA by default with a timestamp authority, B-B without. */
  SEAL_LEVEL: z.enum(sealLevels).optional(),
  /** PEM: the roots a timestamp authority's chain must reach; unset: Node's bundled public roots and the seal's own root. */
  SEAL_TRUST_ANCHORS_PATH: z.string().optional(),
  /** B-LTA: a sealed PDF's archive is renewed this many days before its newest timestamp's authority certificate ends. */
  SEAL_ARCHIVE_RENEWAL_DAYS: z.coerce.number().int().positive().default(90),
  /**
   * B-LTA: the day each algorithm stops being trusted (`name=YYYY-MM-DD`, comma-separated); a file whose
   * newest timestamp rests on one is renewed SEAL_ARCHIVE_RENEWAL_DAYS before. Defaults: NIST SP 800-131A.
   */
  SEAL_ALGORITHM_SUNSETS: z
    .string()
    .regex(/^\s*([\w-]+=\d{4}-\d{2}-\d{2}\s*(,\s*[\w-]+=\d{4}-\d{2}-\d{2}\s*)*)?$/, {
      error: 'must be name=YYYY-MM-DD, comma-separated (sha1=2014-01-01,rsa-2048=2031-01-01)',
    })
    .refine((value) => [...value.matchAll(/=(\S{10})/g)].every(([, day]) => !Number.isNaN(Date.parse(day))), { error: 'names a day that does not exist' })
    .default(DEFAULT_ALGORITHM_SUNSETS),
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
  /** TRUST_PROXY split: addresses or CIDR ranges of the proxies whose X-Forwarded-For is believed. */
  trustedProxies: string[];
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
    trustedProxies: values.TRUST_PROXY.split(',')
      .map((proxy) => proxy.trim())
      .filter(Boolean),
    webhookAllowedPrivateHosts: values.WEBHOOK_ALLOW_PRIVATE_HOSTS.split(',')
      .map((host) => host.trim().toLowerCase())
      .filter(Boolean),
  };
}

// In production these must be given: every process must share them, and none may be made up per container.
const requiredInProduction: Partial<Record<keyof Env, string>> = {
  DATABASE_URL: 'every process must use the same PostgreSQL database (the embedded one lives in one DATA_DIR)',
  TEMPORAL_ADDRESS: 'every process must reach the same Temporal cluster (the embedded dev server is for one machine)',
  PUBLIC_URL: 'signing links in e-mails must point at the address signers can reach',
  WEBHOOK_SECRET_KEY: 'webhook secrets encrypted by one process must be readable by every other: openssl rand -hex 32',
  SIGNING_TOKEN_SECRET: 'a signing link made by one process must be accepted by every other: openssl rand -hex 32',
  SEAL_P12_PATH:
    "sealed documents must carry your organisation's certificate, the same in every worker (npx signet seal-certificate makes a self-signed one; or a key on a PKCS#11 token or in a KMS: docs/sealing.md)",
};

/** The seal key is on a PKCS#11 token or in a KMS, so no PKCS#12 file is needed. */
const sealKeyElsewhere = (config: Config) => Boolean(config.SEAL_PKCS11_MODULE || config.SEAL_KMS_KEY_ID);

/** With NODE_ENV=production, stops the process at start when a setting it must not generate is missing. */
export function checkProductionSettings(config: Config) {
  if (config.NODE_ENV !== 'production') return;
  const problems = Object.entries(requiredInProduction)
    .filter(([name]) => !config[name as keyof Env] && (name !== 'SEAL_P12_PATH' || (config.runWorker && !sealKeyElsewhere(config))))
    .map(([name, why]) => `${name} is required with NODE_ENV=production: ${why}`);
  if (config.SEAL_P12_PATH) {
    try {
      fs.accessSync(config.SEAL_P12_PATH, fs.constants.R_OK);
    } catch {
      problems.push(`SEAL_P12_PATH=${config.SEAL_P12_PATH} is not a readable file`);
    }
  }
  if (problems.length) throw new Error(`Invalid configuration:\n  ${problems.join('\n  ')}`);
}
