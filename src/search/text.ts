/**
 * Words as search sees them: punctuation, symbols and spaces separate words, on both backends (the SQL
 * function signet_search_words does the same for PostgreSQL's tsvector columns), so "contract.pdf" and
 * "ada@example.com" are found by "contract" and "ada".
 */
export function searchWords(text: string | null | undefined): string {
  return (text ?? '').replace(/[\s\p{P}\p{S}]+/gu, ' ').trim();
}

/** The words of q: "quoted phrases", single words, and the last word as a prefix while it is being typed. */
export interface SearchText {
  phrases: string[][];
  words: string[];
  prefix: string | null;
}

const split = (text: string) => searchWords(text.toLowerCase()).split(' ').filter(Boolean);

/**
 * Reads q as plain text: quotes make phrases, everything else that is not a letter or digit only separates
 * words. Query syntax of either engine (`*:*`, `{"match_all":{}}`, `a & !b`) is just more words. The last
 * word is a prefix unless q ends with a space or a closing quote ("contr" finds "contract").
 */
export function parseSearchText(q: string): SearchText {
  const phrases: string[][] = [];
  const rest = q.replace(/"([^"]*)"/g, (_, phrase: string) => {
    const words = split(phrase);
    if (words.length > 0) phrases.push(words);
    return ' ';
  });
  const words = split(rest);
  const typing = words.length > 0 && !/[\s"]$/.test(q);
  const prefix = typing ? words.pop()! : null;
  return { phrases, words, prefix };
}

export const isEmptySearchText = ({ phrases, words, prefix }: SearchText) => phrases.length === 0 && words.length === 0 && prefix === null;
