import type { SignerField } from '../documents/fields';
import type { Template } from '../templates/store';

/** What a request made from a template gives for each signer, and the values it prefills by field label. */
export interface TemplateRequestInput {
  signers: { name: string; email: string; role?: string; verification?: { method: 'access_code'; code: string } | { method: 'email_code' } }[];
  prefill?: Record<string, string | boolean>;
}

export interface TemplateSigner {
  name: string;
  email: string;
  fields: SignerField[];
  verification?: TemplateRequestInput['signers'][number]['verification'];
}

const PREFILLABLE = ['text', 'date', 'checkbox'];

/** Why these signers and prefilled values do not fit the template: every problem at once. */
export function templateRequestProblems(template: Template, { signers, prefill = {} }: TemplateRequestInput): string[] {
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
  for (const [label, value] of Object.entries(prefill)) {
    const field = template.fields.find((candidate) => candidate.label === label);
    if (!field || !PREFILLABLE.includes(field.type)) {
      problems.push(`prefill.${label} must name a text, date or checkbox field of the template${field ? `: its type is ${field.type}` : ''}`);
    } else if (field.type === 'checkbox' && typeof value !== 'boolean') problems.push(`prefill.${label} must be true or false: it is a checkbox`);
    else if (field.type !== 'checkbox' && typeof value !== 'string') problems.push(`prefill.${label} must be text: its field's type is ${field.type}`);
  }
  return problems;
}

/**
 * The signers of a request made from a template, in signing order (their roles' order), each with the
 * fields of its role and the values prefilled in them. Call after templateRequestProblems found none.
 */
export function templateSigners(template: Template, { signers, prefill = {} }: TemplateRequestInput): TemplateSigner[] {
  const orderOf = (role: string | undefined) => template.roles.find((candidate) => candidate.name === role)?.order ?? 0;
  return [...signers]
    .sort((a, b) => orderOf(a.role) - orderOf(b.role))
    .map((signer) => ({
      name: signer.name,
      email: signer.email,
      verification: signer.verification,
      fields: template.fields
        .filter((field) => field.role === signer.role)
        .map(({ page, x, y, width, height, type, label, required }) => {
          const value = label === null ? undefined : prefill[label];
          return { page, x, y, width, height, type, label, required, ...(value === undefined ? {} : { value: String(value) }) };
        }),
    }));
}
