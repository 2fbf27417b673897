import { AppError } from '../errors';

// The API's validation details name a field path and a rule ("signers must have at least 1 item(s)"),
// which is right for a program; the console says what the person should do instead. The API's own
// answers keep their details.
const wordings: [RegExp, (...groups: string[]) => string][] = [
  [/^(?:content|file) is required$/, () => 'Choose a PDF file.'],
  [/^content must be a PDF file$/, () => 'Choose a PDF file: this file is not a PDF.'],
  [/^content is a truncated PDF/, () => 'This PDF is incomplete: upload the whole file again.'],
  [/^content must not be an encrypted PDF$/, () => 'This PDF is password-protected: choose one without a password.'],
  [/^content must be a PDF with at least one page$/, () => 'This PDF has no pages: choose one with at least one.'],
  [/^fileName is required$/, () => 'The file needs a name.'],
  [/^signers must have at least 1 item\(s\)$/, () => 'Add at least one signer.'],
  [/^signers must have at most (\d+) items$/, (most) => `Add at most ${most} signers.`],
  [/^documents must list at most (\d+) documents/, (most) => `Choose at most ${most} documents.`],
];

/** A problem in the console's words, or undefined when the API's wording is already one for a person. */
export function consoleWording(problem: string): string | undefined {
  for (const [pattern, say] of wordings) {
    const match = pattern.exec(problem);
    if (match) return say(...match.slice(1));
  }
  return undefined;
}

/** The error with its details in the console's words (its status, code and headers unchanged). */
export function inConsoleWords(error: AppError): AppError {
  if (!error.details?.some((problem) => consoleWording(problem))) return error;
  const details = error.details.map((problem) => consoleWording(problem) ?? problem);
  return new AppError(error.status, error.code, error.message, { details, headers: error.headers, extra: error.extra });
}
