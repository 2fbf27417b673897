import type { SignerField } from '../documents/fields';
import { withArticle } from '../domain/words';
import { formOf, type PlacedField } from '../documents/form';
import { checkValue, type RuledFieldType } from '../fields/rules';
import { ruledFieldTypes, selectionFieldTypes } from '../fields/types';
import type { RecipientType, SigningOrder } from '../domain/signingRequests';
import type { Template } from '../templates/store';
import type { VerificationInput } from './schema';

/** What a request made from a template gives for each signer, and the values it prefills by field label. */
export interface TemplateRequestInput {
  signers: {
    name: string;
    email: string;
    role?: string;
    recipientType?: RecipientType;
    routingOrder?: number;
    verification?: VerificationInput;
  }[];
  prefill?: Record<string, string | boolean | number | string[]>;
  signingOrder?: SigningOrder;
}

/**
 * A recipient as a request is made with it: its kind, its step when given, and a signer's fields (from a
 * template: its role's kind and step, and its role's fields on the request's documents).
 */
export interface RequestRecipient {
  name: string;
  email: string;
  recipientType: RecipientType;
  routingOrder?: number;
  fields?: SignerField[];
  verification?: VerificationInput;
}

/** The field types a sender may prefill (by label). */
export const PREFILLABLE = ['text', 'date', 'checkbox', 'number', 'email', 'phone', 'radio', 'dropdown', 'multiSelect', 'checkboxGroup'];
// Prefilled values of these are checked by the field's rules and stored as the signer's would be (a number as a plain
// decimal, a selection as its JSON list); a text is taken as the sender wrote it.
const RULED: readonly string[] = ruledFieldTypes.filter((type) => type !== 'text');
const SELECTIONS: readonly string[] = selectionFieldTypes;
const kindOf = (type: string) => (type === 'number' ? 'a number' : SELECTIONS.includes(type) ? 'a list of options' : 'text');

/** A prefilled value as stored, or why it does not fit its field. */
function prefilled(field: PlacedField, value: string | boolean | number | string[]): { stored?: string; problem?: string } {
  if (field.type === 'checkbox') return typeof value === 'boolean' ? { stored: String(value) } : { problem: 'must be true or false: it is a checkbox' };
  if (RULED.includes(field.type)) {
    if (typeof value === 'boolean' || Array.isArray(value) !== SELECTIONS.includes(field.type))
      return { problem: `must be ${kindOf(field.type)}: its field's type is ${field.type}` };
    const [definition] = formOf([field]).definitions;
    return checkValue(field.type as RuledFieldType, { ...definition.rules, required: true }, value, definition.options);
  }
  return typeof value === 'string' ? { stored: value } : { problem: `must be text: its field's type is ${field.type}` };
}

/** Why these signers and prefilled values do not fit the template: every problem at once. */
export function templateRequestProblems(template: Template, { signers, prefill = {}, signingOrder }: TemplateRequestInput): string[] {
  const problems: string[] = [];
  const roleNames = template.roles.map((role) => role.name);
  const filled = new Map<string, number>();
  signers.forEach((signer, index) => {
    if (signer.role === undefined) return; // the schema reported it
    if (!roleNames.includes(signer.role))
      problems.push(`signers.${index}.role must be one of the template’s roles (${roleNames.join(', ')}): "${signer.role}" is not`);
    else if (filled.has(signer.role)) problems.push(`signers.${index}.role must be unique: "${signer.role}" is also signers.${filled.get(signer.role)}.role`);
    else filled.set(signer.role, index);
  });
  for (const role of roleNames) if (!filled.has(role)) problems.push(`signers must have a signer for the role "${role}"`);
  problems.push(...recipientKindProblems(template, { signers, signingOrder }));
  for (const [label, value] of Object.entries(prefill)) {
    const field = template.fields.find((candidate) => candidate.label === label);
    if (!field || !PREFILLABLE.includes(field.type)) {
      problems.push(
        `prefill.${label} must name a field of the template that a sender may fill (${PREFILLABLE.join(', ')})${field ? `: its type is ${field.type}` : ''}`,
      );
    } else {
      const { problem } = prefilled(field, value);
      if (problem) problems.push(`prefill.${label} ${problem}`);
    }
  }
  return problems;
}

/**
 * A role decides its recipient's kind and step: a signer's recipientType must be its role's or left out
 * (signer, the default), its routingOrder its role's when the role has one; and roles with steps are
 * not signed in sequential order.
 */
function recipientKindProblems(template: Template, { signers, signingOrder }: Pick<TemplateRequestInput, 'signers' | 'signingOrder'>): string[] {
  const problems: string[] = [];
  signers.forEach((signer, index) => {
    const role = template.roles.find((candidate) => candidate.name === signer.role);
    if (!role) return;
    if (signer.recipientType !== undefined && signer.recipientType !== 'signer' && signer.recipientType !== role.recipientType)
      problems.push(`signers.${index}.recipientType must be left out or be the role's: "${role.name}" is ${withArticle(role.recipientType)}'s role`);
    if (role.recipientType === 'cc' && signer.verification !== undefined)
      problems.push(`signers.${index}.verification cannot be given to a cc: "${role.name}" is a cc's role, and a cc never opens a signing page`);
    problems.push(...roleVerificationProblems(role, signer.verification, index));
    if (signer.routingOrder !== undefined && role.routingOrder !== null && signer.routingOrder !== role.routingOrder)
      problems.push(`signers.${index}.routingOrder must be left out or be the role's: "${role.name}" acts in step ${role.routingOrder}`);
  });
  if (signingOrder === 'sequential' && template.roles.some((role) => role.routingOrder !== null))
    problems.push('signingOrder cannot be sequential: the template’s roles have routing orders, which are the steps');
  return problems;
}

/**
 * A role that asks for verification decides its signer's method: an e-mailed code needs nothing more (the
 * signer's verification may be left out), an access code needs the code, which no template holds.
 */
function roleVerificationProblems(role: Template['roles'][number], given: VerificationInput | undefined, index: number): string[] {
  if (!role.verification) return [];
  const { method } = role.verification;
  if (given !== undefined && given.method !== method)
    return [`signers.${index}.verification.method must be left out or be the role's: "${role.name}" asks for ${method}`];
  if (method === 'access_code' && given === undefined)
    return [
      `signers.${index}.verification.code is required: the role "${role.name}" asks for an access code, which a template cannot hold ` +
        '(give signers[].verification: {"method": "access_code", "code": …})',
    ];
  return [];
}

/**
 * The recipients of a request made from a template, in signing order (their roles' order), each of its
 * role's kind and step (or the signer's routingOrder; without either, the request's signingOrder decides,
 * as for any request), its role's verification unless it gave its own, a signer with its role's fields on the request's documents (`documentIds`, by the
 * template's positions) and the values prefilled in them. Call after templateRequestProblems found none.
 */
export function templateSigners(template: Template, { signers, prefill = {} }: TemplateRequestInput, documentIds: string[]): RequestRecipient[] {
  const roleOf = (name: string | undefined) => template.roles.find((candidate) => candidate.name === name);
  return [...signers]
    .sort((a, b) => (roleOf(a.role)?.order ?? 0) - (roleOf(b.role)?.order ?? 0))
    .map((signer) => {
      const role = roleOf(signer.role);
      const recipientType = role?.recipientType ?? 'signer';
      const routingOrder = role?.routingOrder ?? signer.routingOrder;
      const fields = template.fields
        .filter((field) => field.role === signer.role)
        .map(({ document, role: _role, ...field }) => {
          const value = field.label === null ? undefined : prefill[field.label];
          return { documentId: documentIds[document - 1], ...field, ...(value === undefined ? {} : { value: prefilled(field, value).stored }) };
        });
      return {
        name: signer.name,
        email: signer.email,
        recipientType,
        routingOrder,
        verification: signer.verification ?? (role?.verification?.method === 'email_code' ? { method: 'email_code' as const } : undefined),
        ...(recipientType === 'signer' ? { fields } : {}),
      };
    });
}
