import { problemsOf } from '../api/validation';
import { withArticle } from '../domain/words';
import type { RecipientType, VerificationMethod } from '../domain/signingRequests';
import type { FieldType } from '../fields/types';
import { placedFieldOf, type TaggedField } from '../pdf/textTags';
import { tagTextProblems } from '../documents/fields';
import { describeFieldProblem, type PlacedField, signerFieldProblems } from '../documents/form';
import { MAX_FIELDS_PER_ROLE, MAX_ROLES, MAX_TEMPLATE_FIELDS, roleName } from './schema';

export interface TemplateRole {
  name: string;
  /** Signing order when sequential: lower first. */
  order: number;
  /** What the role's recipient does: only a signer has fields. */
  recipientType: RecipientType;
  /** The step the role's recipient acts in; null: the request's signingOrder decides. */
  routingOrder: number | null;
  /** What the role's signer proves before their page opens; an access code itself is given with each request. */
  verification: { method: VerificationMethod } | null;
}

/** A template's field: where it is, whose it is, and the options, rules, condition, formula or text it carries (PlacedField). */
export interface TemplateField extends Omit<PlacedField, 'type' | 'label' | 'required'> {
  /** 1-based position of the field's document in the template's documents. */
  document: number;
  role: string;
  type: FieldType;
  required: boolean;
  label: string | null;
  /** 1-based page; PDF points from the page's bottom-left corner. */
  page: number;
  x: number;
  y: number;
  width: number;
  height: number;
}

/**
 * Roles and fields as far as they could be read, for the rules: a field of a body whose shape is wrong has
 * only the properties that passed their schema, and `everyRole` / `everyField` are false when a role or a
 * field could not be read at all, so that the rules that need all of them are left out.
 */
export interface LayoutDraft {
  roles: TemplateRole[];
  fields: Partial<TemplateField>[];
  roleNames: string[];
  fieldNames: string[];
  everyRole?: boolean;
  everyField?: boolean;
}

/** A template's roles and fields, and how a problem names each (its path in the request, or the tag it came from). */
export interface TemplateLayout extends LayoutDraft {
  fields: TemplateField[];
}

/** A role as a request gives it (or as it was read): `order` defaults to its position (1-based), the recipient type to signer. */
export type RoleInput = {
  name: string;
  order?: number;
  recipientType?: RecipientType;
  routingOrder?: number | null;
  verification?: { method: VerificationMethod } | null;
};

export const roleOf = (role: RoleInput, index: number): TemplateRole => ({
  name: role.name,
  order: role.order ?? index + 1,
  recipientType: role.recipientType ?? 'signer',
  routingOrder: role.routingOrder ?? null,
  verification: role.verification ? { method: role.verification.method } : null,
});

/** Roles and fields as a request gives them (fields on their documents already), named by their paths in it. */
export function layoutOf(roles: RoleInput[], fields: (Omit<TemplateField, 'label'> & { label?: string | null })[]): TemplateLayout {
  return {
    roles: roles.map(roleOf),
    fields: fields.map((field) => ({ ...field, label: field.label ?? null })),
    roleNames: roles.map((_, index) => `roles.${index}`),
    fieldNames: fields.map((_, index) => `fields.${index}`),
  };
}

/** Roles in signing order (ties keep their order in the list), as a template stores them. */
export const inSigningOrder = (roles: TemplateRole[]) => [...roles].sort((a, b) => a.order - b.order);

/** A text tag found in one of a template's documents (1-based position; `of` names it when there are several). */
export type DocumentTag = TaggedField & { document: number; of?: string };

const tagPlace = (field: DocumentTag) => `on page ${field.page}${field.of ? ` of ${field.of}` : ''}`;

/** The given layout plus the fields of text tags; roles the tags name that are not given are added in order of first appearance, after the others. */
export function withTaggedFields<Layout extends LayoutDraft>(layout: Layout, tagged: DocumentTag[]): Layout {
  const roles = [...layout.roles];
  const roleNames = [...layout.roleNames];
  let order = Math.max(0, ...roles.map((role) => role.order));
  for (const field of tagged) {
    if (roles.some((role) => role.name === field.role)) continue;
    roles.push({ name: field.role, order: ++order, recipientType: 'signer', routingOrder: null, verification: null });
    roleNames.push(`the role of tag ${field.tag} ${tagPlace(field)}`);
  }
  return {
    ...layout,
    roles,
    roleNames,
    fields: [...layout.fields, ...tagged.map((field) => ({ document: field.document, role: field.role, ...placedFieldOf(field) }))],
    fieldNames: [...layout.fieldNames, ...tagged.map((field) => `the field of tag ${field.tag} ${tagPlace(field)}`)],
  };
}

/** [width, height] of each page of each document, by position; undefined for a document that could not be read. */
export type PageSizesByDocument = ([number, number][] | undefined)[];

const round = (points: number) => Math.round(points * 100) / 100;

/** Why a field is not on a page of its document (the same words as a signing request's fields), if it is not. */
function pageProblem({ document, page, x, y, width, height }: Partial<TemplateField>, at: string, documents: PageSizesByDocument): string | undefined {
  const pageSizes = document === undefined ? undefined : documents[document - 1];
  if (page === undefined || pageSizes === undefined) return undefined;
  const size = pageSizes[page - 1];
  const itsDocument = documents.length > 1 ? 'its document' : 'the PDF';
  if (!size) return `${at}.page must be at most ${pageSizes.length}: ${itsDocument} has ${pageSizes.length} page(s)`;
  if (x === undefined || y === undefined || width === undefined || height === undefined) return undefined;
  const [pageWidth, pageHeight] = size;
  if (x + width > pageWidth || y + height > pageHeight) return `${at} must lie inside page ${page} (${round(pageWidth)} × ${round(pageHeight)} points)`;
  return undefined;
}

/** The rules of the roles' recipient types and steps, as a request's recipients follow them. */
function recipientProblems({ roles, roleNames }: LayoutDraft): string[] {
  const problems: string[] = [];
  if (roles.length > 0 && roles.every((role) => role.recipientType === 'cc')) problems.push('roles must have at least one role that is not cc');
  roles.forEach((role, index) => {
    if (role.recipientType === 'cc' && role.verification)
      problems.push(`${roleNames[index]}.verification cannot be given to a cc's role: a cc never opens a signing page`);
  });
  if (roles.some((role) => role.routingOrder !== null))
    roles.forEach((role, index) => {
      if (role.routingOrder === null && role.recipientType !== 'cc') problems.push(`${roleNames[index]}.routingOrder is required once another role has one`);
    });
  return problems;
}

/**
 * A request's limits: a template with more roles than a request has signers, or a role with more fields
 * than a signer has, could never be sent. Text tags can add any number of both, so they are counted here,
 * with the roles and fields given.
 */
export function limitProblems({ roles, fields, roleNames }: LayoutDraft): string[] {
  const problems: string[] = [];
  if (roles.length > MAX_ROLES)
    problems.push(
      `roles must have at most ${MAX_ROLES} items, those its text tags name included (a request has at most ${MAX_ROLES} signers): there are ${roles.length}`,
    );
  if (fields.length > MAX_TEMPLATE_FIELDS)
    problems.push(`fields must have at most ${MAX_TEMPLATE_FIELDS} items, those of its text tags included: there are ${fields.length}`);
  const perRole = new Map<string, number>();
  for (const { role } of fields) if (role !== undefined) perRole.set(role, (perRole.get(role) ?? 0) + 1);
  roles.forEach((role, index) => {
    const count = perRole.get(role.name) ?? 0;
    if (count > MAX_FIELDS_PER_ROLE)
      problems.push(
        `${roleNames[index]} ("${role.name}") must have at most ${MAX_FIELDS_PER_ROLE} fields (a request's signer has at most ${MAX_FIELDS_PER_ROLE}): it has ${count}`,
      );
  });
  return problems;
}

/**
 * Every rule a template's roles and fields follow, against the pages of its PDF (the page rules are left
 * out without them); one problem per broken rule, all of them at once. A field must lie inside its page
 * because requests made from the template are sealed with its values drawn there. Past a request's
 * limits only those are reported: the rest would be about a template that cannot be sent anyway.
 */
export function layoutProblems(layout: LayoutDraft, documents?: PageSizesByDocument): string[] {
  const limits = limitProblems(layout);
  if (limits.length > 0) return limits;
  const { roles, fields, roleNames, fieldNames, everyRole = true, everyField = true } = layout;
  const problems: string[] = [];
  if (roles.length === 0 && everyRole) problems.push('roles must have at least one role');
  problems.push(...recipientProblems(layout));
  const roleIndex = new Map<string, number>();
  roles.forEach((role, index) => {
    const first = roleIndex.get(role.name);
    if (first === undefined) roleIndex.set(role.name, index);
    else problems.push(`${roleNames[index]}.name must be unique: "${role.name}" is also ${roleNames[first]}.name`);
  });
  const labels = new Map<string, string>();
  fields.forEach((field, index) => {
    const at = fieldNames[index];
    // Given ones passed these schemas already; a text tag's are read from the PDF.
    const textProblems = [...(field.role === undefined ? [] : problemsOf(roleName, field.role, `${at}.role`)), ...tagTextProblems(field, at)];
    problems.push(...textProblems);
    if (field.role !== undefined && everyRole && !roleIndex.has(field.role)) {
      problems.push(`${at}.role must be one of the roles (${[...roleIndex.keys()].join(', ') || 'none given'}): "${field.role}" is not`);
    }
    const placesNothing = roles.find((role) => role.name === field.role && role.recipientType !== 'signer');
    if (placesNothing)
      problems.push(`${at}.role cannot be "${placesNothing.name}", ${withArticle(placesNothing.recipientType)}: only a signer's role has fields`);
    const outside = documents && pageProblem(field, at, documents);
    if (outside) problems.push(outside);
    if (field.label !== undefined && field.label !== null) {
      const other = labels.get(field.label);
      if (other) problems.push(`${at}.label must be unique within the template: "${field.label}" is also ${other}.label`);
      else labels.set(field.label, at);
    }
  });
  // A field that could not be read might be the signature field a role needs.
  const mayBeSignatureOf = (field: Partial<TemplateField>, role: string) =>
    (field.role === undefined || field.role === role) && (field.type === undefined || field.type === 'signature');
  roles.forEach((role, index) => {
    if (roleIndex.get(role.name) !== index || !everyField || role.recipientType !== 'signer') return;
    if (!fields.some((field) => mayBeSignatureOf(field, role.name)))
      problems.push(`${roleNames[index]} ("${role.name}") must have at least one signature field`);
  });
  if (everyField) problems.push(...formProblemsByRole(fields, fieldNames));
  return problems;
}

/** Each role's fields are its signer's form: checked as a request's signer's fields are, once every field's type is known. */
function formProblemsByRole(fields: Partial<TemplateField>[], fieldNames: string[]): string[] {
  if (!fields.every((field) => field.type !== undefined)) return [];
  const byRole = new Map<string | undefined, number[]>();
  fields.forEach((field, index) => byRole.set(field.role, [...(byRole.get(field.role) ?? []), index]));
  return [...byRole].flatMap(([role, positions]) => {
    const name = (position: number) => fieldNames[positions[position]];
    return signerFieldProblems(
      positions.map((index) => fields[index] as PlacedField),
      name,
    ).map((problem) => describeFieldProblem(problem, name, `fields of the role "${role}"`));
  });
}
