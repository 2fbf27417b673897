import type { Knex } from 'knex';
import * as accountsAndApiKeys from './20261121000000_accounts_and_api_keys';
import * as documentsAndEvents from './20261121000100_documents_and_events';
import * as signingRequests from './20261121000200_signing_requests';
import * as mailOutbox from './20261121000900_mail_outbox';
import * as webhooks from './20261121001000_webhooks';
import * as search from './20261121001100_search';
import * as searchIndexing from './20261121001200_search_indexing';
import * as signingRequestWorkflows from './20261121001300_signing_request_workflows';
import * as authChangeNotifications from './20261121001400_auth_change_notifications';
import * as documentPageSizes from './20261123000000_document_page_sizes';
import * as webhookQueues from './20261123221700_webhook_queues';
import * as documentTextExtraction from './20261124001000_document_text_extraction';
import * as templates from './20261125000000_templates';
import * as searchEventCursor from './20261125015100_search_event_cursor';
import * as consolePeople from './20261126000000_console_people';
import * as emailVerification from './20261126063200_email_verification';
import * as mailAllowance from './20261126064400_mail_allowance';
import * as documentTextsToIndex from './20261126121900_document_texts_to_index';
import * as documentNameSearch from './20261126122500_document_name_search';
import * as signingRequestDocuments from './20261126130900_signing_request_documents';
import * as recipientTypes from './20261126130901_recipient_types';
import * as templateDocuments from './20261126150433_template_documents';
import * as requestDocumentsSearch from './20261126151000_request_documents_search';
import * as requestNameSearch from './20261126155300_request_name_search';
import * as signerVerification from './20261126155500_signer_verification';
import * as accountBrands from './20261126182605_account_brands';
import * as sealedDocumentsByHash from './20261126183600_sealed_documents_by_hash';
import * as idempotencyKeys from './20261126183622_idempotency_keys';
import * as embeddedSigning from './20261126183713_embedded_signing';
import * as apiKeyScopes from './20261126185923_api_key_scopes';
import * as textVectorsByBackend from './20261127012900_text_vectors_by_backend';
import * as textCompressionLz4 from './20261127053600_text_compression_lz4';
import * as searchWordPairs from './20261129235900_search_word_pairs';
import * as idempotencyKeyOwner from './20261201223500_idempotency_key_owner';
import * as signerVerificationEscalation from './20261201224000_signer_verification_escalation';
import * as documentTextTags from './20261201231900_document_text_tags';
import * as sealArchive from './20261202060000_seal_archive';
import * as signerUploads from './20261204014000_signer_uploads';
import * as textTagReaderVersion from './20261204015000_text_tag_reader_version';
import * as bulkSends from './20261204021000_bulk_sends';
import * as bulkSendStarted from './20261204050000_bulk_send_started';
import * as members from './20261206000000_members';

// Listed explicitly (not read from disk) so that migrations run the same under tsx, compiled or bundled.
// Each is named after the time it was written, and knex runs them in this order: a new one is appended
// and must sort after every migration on `main` (test/unit/migrationOrder.test.ts checks this).
const migrations: Record<string, Knex.Migration> = {
  '20261121000000_accounts_and_api_keys': accountsAndApiKeys,
  '20261121000100_documents_and_events': documentsAndEvents,
  '20261121000200_signing_requests': signingRequests,
  '20261121000900_mail_outbox': mailOutbox,
  '20261121001000_webhooks': webhooks,
  '20261121001100_search': search,
  '20261121001200_search_indexing': searchIndexing,
  '20261121001300_signing_request_workflows': signingRequestWorkflows,
  '20261121001400_auth_change_notifications': authChangeNotifications,
  '20261123000000_document_page_sizes': documentPageSizes,
  '20261123221700_webhook_queues': webhookQueues,
  '20261124001000_document_text_extraction': documentTextExtraction,
  '20261125000000_templates': templates,
  '20261125015100_search_event_cursor': searchEventCursor,
  '20261126000000_console_people': consolePeople,
  '20261126063200_email_verification': emailVerification,
  '20261126064400_mail_allowance': mailAllowance,
  '20261126121900_document_texts_to_index': documentTextsToIndex,
  '20261126122500_document_name_search': documentNameSearch,
  '20261126130900_signing_request_documents': signingRequestDocuments,
  '20261126130901_recipient_types': recipientTypes,
  '20261126150433_template_documents': templateDocuments,
  '20261126151000_request_documents_search': requestDocumentsSearch,
  '20261126155300_request_name_search': requestNameSearch,
  '20261126155500_signer_verification': signerVerification,
  '20261126182605_account_brands': accountBrands,
  '20261126183600_sealed_documents_by_hash': sealedDocumentsByHash,
  '20261126183622_idempotency_keys': idempotencyKeys,
  '20261126183713_embedded_signing': embeddedSigning,
  '20261126185923_api_key_scopes': apiKeyScopes,
  '20261127012900_text_vectors_by_backend': textVectorsByBackend,
  '20261127053600_text_compression_lz4': textCompressionLz4,
  '20261129235900_search_word_pairs': searchWordPairs,
  '20261201223500_idempotency_key_owner': idempotencyKeyOwner,
  '20261201224000_signer_verification_escalation': signerVerificationEscalation,
  '20261201231900_document_text_tags': documentTextTags,
  '20261202060000_seal_archive': sealArchive,
  '20261204014000_signer_uploads': signerUploads,
  '20261204015000_text_tag_reader_version': textTagReaderVersion,
  '20261204021000_bulk_sends': bulkSends,
  '20261204050000_bulk_send_started': bulkSendStarted,
  '20261206000000_members': members,
};

/**
 * Migrations once named with a date still to come, so that the next one written would have sorted before
 * them. Databases that applied them under the old name have their `knex_migrations` rows renamed
 * (renameAppliedMigrations in ../index.ts) before knex compares those rows with the list above.
 */
export const formerNames: Record<string, string> = {
  '20261127100000_webhook_queues': '20261123221700_webhook_queues',
  '20261128000000_search_event_cursor': '20261125015100_search_event_cursor',
  '20261129000000_email_verification': '20261126063200_email_verification',
  '20261129100000_mail_allowance': '20261126064400_mail_allowance',
};

export const migrationSource: Knex.MigrationSource<string> = {
  getMigrations: async () => Object.keys(migrations),
  getMigrationName: (name) => name,
  getMigration: async (name) => migrations[name],
};
