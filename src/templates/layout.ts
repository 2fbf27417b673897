import type { FieldType, TaggedField } from '../pdf/textTags';

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

/** A template's roles and fields, and how a problem names each (its path in the request, or the tag it came from). */
export interface TemplateLayout {
  roles: TemplateRole[];
  fields: TemplateField[];
  roleNames: string[];
  fieldNames: string[];
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
export function withTaggedFields(layout: TemplateLayout, tagged: TaggedField[]): TemplateLayout {
  const roles = [...layout.roles];
  const roleNames = [...layout.roleNames];
  let order = Math.max(0, ...roles.map((role) => role.order));
  for (const field of tagged) {
    if (roles.some((role) => role.name === field.role)) continue;
    roles.push({ name: field.role, order: ++order });
    roleNames.push(`the role of tag ${field.tag} on page ${field.page}`);
  }
  return {
    roles,
    roleNames,
    fields: [...layout.fields, ...tagged.map(({ role, type, label, page, x, y, width, height }) => ({ role, type, label, required: true, page, x, y, width, height }))],
    fieldNames: [...layout.fieldNames, ...tagged.map((field) => `the field of tag ${field.tag} on page ${field.page}`)],
  };
}

const round = (points: number) => Math.round(points * 100) / 100;

/** Why a field is not on a page of the PDF (the same words as a signing request's fields), if it is not. */
function pageProblem(field: TemplateField, at: string, pageSizes: [number, number][]): string | undefined {
  const size = pageSizes[field.page - 1];
  if (!size) return `${at}.page must be at most ${pageSizes.length}: the PDF has ${pageSizes.length} page(s)`;
  const [width, height] = size;
  if (field.x + field.width > width || field.y + field.height > height) return `${at} must lie inside page ${field.page} (${round(width)} × ${round(height)} points)`;
  return undefined;
}

/**
 * Every rule a template's roles and fields follow, against the pages of its PDF (the page rules are left
 * out without them); one problem per broken rule, all of them at once. A field must lie inside its page
 * because requests made from the template are sealed with its values drawn there.
 */
export function layoutProblems({ roles, fields, roleNames, fieldNames }: TemplateLayout, pageSizes?: [number, number][]): string[] {
  const problems: string[] = [];
  if (roles.length === 0) problems.push('roles must have at least one role');
  const roleIndex = new Map<string, number>();
  roles.forEach((role, index) => {
    const first = roleIndex.get(role.name);
    if (first === undefined) roleIndex.set(role.name, index);
    else problems.push(`${roleNames[index]}.name must be unique: "${role.name}" is also ${roleNames[first]}.name`);
  });
  const labels = new Map<string, string>();
  fields.forEach((field, index) => {
    const at = fieldNames[index];
    if (!roleIndex.has(field.role)) problems.push(`${at}.role must be one of the roles (${[...roleIndex.keys()].join(', ') || 'none given'}): "${field.role}" is not`);
    const outside = pageSizes && pageProblem(field, at, pageSizes);
    if (outside) problems.push(outside);
    if (field.label !== null) {
      const other = labels.get(field.label);
      if (other) problems.push(`${at}.label must be unique within the template: "${field.label}" is also ${other}.label`);
      else labels.set(field.label, at);
    }
  });
  roles.forEach((role, index) => {
    if (roleIndex.get(role.name) !== index) return;
    if (!fields.some((field) => field.role === role.name && field.type === 'signature')) problems.push(`${roleNames[index]} ("${role.name}") must have at least one signature field`);
  });
  return problems;
}
