import { problemsOf } from '../api/validation';
import type { FieldType, TaggedField } from '../pdf/textTags';
import { fieldLabel, MAX_FIELDS_PER_ROLE, MAX_ROLES, MAX_TEMPLATE_FIELDS, roleName } from './schema';

export interface TemplateRole {
  name: string;
  /** Signing order when sequential: lower first. */
  order: number;
}

export interface TemplateField {
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

/** Roles and fields as a request gives them, named by their paths in it; a role without `order` takes its position (1-based). */
export function layoutOf(roles: { name: string; order?: number }[], fields: (Omit<TemplateField, 'label'> & { label?: string | null })[]): TemplateLayout {
  return {
    roles: roles.map((role, index) => ({ name: role.name, order: role.order ?? index + 1 })),
    fields: fields.map((field) => ({ ...field, label: field.label ?? null })),
    roleNames: roles.map((_, index) => `roles.${index}`),
    fieldNames: fields.map((_, index) => `fields.${index}`),
  };
}

/** Roles in signing order (ties keep their order in the list), as a template stores them. */
export const inSigningOrder = (roles: TemplateRole[]) => [...roles].sort((a, b) => a.order - b.order);

/** The given layout plus the fields of text tags; roles the tags name that are not given are added in order of first appearance, after the others. */
export function withTaggedFields<Layout extends LayoutDraft>(layout: Layout, tagged: TaggedField[]): Layout {
  const roles = [...layout.roles];
  const roleNames = [...layout.roleNames];
  let order = Math.max(0, ...roles.map((role) => role.order));
  for (const field of tagged) {
    if (roles.some((role) => role.name === field.role)) continue;
    roles.push({ name: field.role, order: ++order });
    roleNames.push(`the role of tag ${field.tag} on page ${field.page}`);
  }
  return {
    ...layout,
    roles,
    roleNames,
    fields: [
      ...layout.fields,
      ...tagged.map(({ role, type, label, page, x, y, width, height }) => ({ role, type, label, required: true, page, x, y, width, height })),
    ],
    fieldNames: [...layout.fieldNames, ...tagged.map((field) => `the field of tag ${field.tag} on page ${field.page}`)],
  };
}

const round = (points: number) => Math.round(points * 100) / 100;

/** Why a field is not on a page of the PDF (the same words as a signing request's fields), if it is not. */
function pageProblem({ page, x, y, width, height }: Partial<TemplateField>, at: string, pageSizes: [number, number][]): string | undefined {
  if (page === undefined) return undefined;
  const size = pageSizes[page - 1];
  if (!size) return `${at}.page must be at most ${pageSizes.length}: the PDF has ${pageSizes.length} page(s)`;
  if (x === undefined || y === undefined || width === undefined || height === undefined) return undefined;
  const [pageWidth, pageHeight] = size;
  if (x + width > pageWidth || y + height > pageHeight) return `${at} must lie inside page ${page} (${round(pageWidth)} × ${round(pageHeight)} points)`;
  return undefined;
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
export function layoutProblems(layout: LayoutDraft, pageSizes?: [number, number][]): string[] {
  const limits = limitProblems(layout);
  if (limits.length > 0) return limits;
  const { roles, fields, roleNames, fieldNames, everyRole = true, everyField = true } = layout;
  const problems: string[] = [];
  if (roles.length === 0 && everyRole) problems.push('roles must have at least one role');
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
    const textProblems = [
      ...(field.role === undefined ? [] : problemsOf(roleName, field.role, `${at}.role`)),
      ...(field.label ? problemsOf(fieldLabel, field.label, `${at}.label`) : []),
    ];
    problems.push(...textProblems);
    if (field.role !== undefined && everyRole && !roleIndex.has(field.role)) {
      problems.push(`${at}.role must be one of the roles (${[...roleIndex.keys()].join(', ') || 'none given'}): "${field.role}" is not`);
    }
    const outside = pageSizes && pageProblem(field, at, pageSizes);
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
    if (roleIndex.get(role.name) !== index || !everyField) return;
    if (!fields.some((field) => mayBeSignatureOf(field, role.name)))
      problems.push(`${roleNames[index]} ("${role.name}") must have at least one signature field`);
  });
  return problems;
}
