import { expect } from 'chai';
import { openApiDocument } from '../../src/openapiDocument';

type Operation = { operationId?: string; responses?: Record<string, { links?: Record<string, { operationId?: string; operationRef?: string }> }> };

describe('operationIds in the OpenAPI document', () => {
  let operations: { label: string; operation: Operation }[];
  before(() => {
    const document = openApiDocument() as { paths: Record<string, Record<string, Operation>> };
    operations = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({ label: `${method.toUpperCase()} ${path}`, operation })),
    );
  });

  it('names every operation, in camelCase, for what it does', () => {
    expect(operations.length).to.be.greaterThan(40);
    for (const { label, operation } of operations) expect(operation.operationId, label).to.match(/^[a-z][A-Za-z]*$/);
    const ids = Object.fromEntries(operations.map(({ label, operation }) => [label, operation.operationId]));
    expect(ids).to.include({
      'POST /signatures': 'createSigningRequest',
      'GET /documents': 'listDocuments',
      'GET /documents/{id}': 'getDocument',
      'POST /webhooks/{id}/deliveries/{deliveryId}/redeliver': 'redeliverWebhookDelivery',
    });
  });

  it('gives no two operations the same one', () => {
    const seen = new Map<string, string>();
    for (const { label, operation } of operations) {
      const id = operation.operationId!;
      expect(seen.has(id), `${label} and ${seen.get(id)} are both ${id}`).to.equal(false);
      seen.set(id, label);
    }
  });

  it('links only to operations the document has, by their operationId', () => {
    const ids = new Set(operations.map(({ operation }) => operation.operationId));
    let links = 0;
    for (const { label, operation } of operations) {
      for (const response of Object.values(operation.responses ?? {})) {
        for (const [name, link] of Object.entries(response.links ?? {})) {
          links += 1;
          expect(link.operationRef, `${label} link ${name}`).to.equal(undefined);
          expect(ids.has(link.operationId), `${label} link ${name} → ${link.operationId}`).to.equal(true);
        }
      }
    }
    expect(links).to.be.greaterThan(10);
  });
});
