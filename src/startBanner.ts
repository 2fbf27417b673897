import type { Config } from './config';

/** What a running system tells the banner: where its api, Temporal UI, database and metrics are. */
export interface BannerFacts {
  url: string;
  temporalUiUrl?: string;
  metricsUrl?: string;
  embeddedDatabase: boolean;
}

type BannerConfig = Pick<Config, 'NODE_ENV' | 'SENDGRID_API_KEY' | 'SMTP_URL' | 'dataDir'>;

/** Where the e-mails go: with no transport configured, into the outbox, whose page exists outside production only. */
function mailLine(config: BannerConfig, url: string) {
  if (config.SENDGRID_API_KEY) return '  Mail         SendGrid (SENDGRID_API_KEY)';
  if (config.SMTP_URL) return '  Mail         SMTP (SMTP_URL)';
  if (config.NODE_ENV === 'production') return '  Mail         the database outbox, unread in production: set SENDGRID_API_KEY or SMTP_URL';
  return `  Outbox       ${url}/dev/mail   the e-mails Signet sends, as no mail transport is configured`;
}

/** The lines `npm start` prints once everything answers: every address a newcomer opens, and the first command. */
export function startBanner(facts: BannerFacts, config: BannerConfig) {
  return [
    '',
    'Signet is running.',
    `  API          ${facts.url}/api/v1`,
    `  Docs         ${facts.url}/docs`,
    `  Console      ${facts.url}/app`,
    mailLine(config, facts.url),
    `  Verify       ${facts.url}/verify`,
    `  Temporal UI  ${facts.temporalUiUrl ?? 'the UI of your Temporal cluster (TEMPORAL_ADDRESS)'}`,
    `  Database     ${facts.embeddedDatabase ? `embedded PGlite in ${config.dataDir}` : 'DATABASE_URL'}`,
    `  Metrics      ${facts.metricsUrl ?? 'off (METRICS_PORT=off)'}`,
    '  Create an account:  npx signet account create --email you@example.com --name "Your Company" --plan business',
    '',
  ].join('\n');
}
